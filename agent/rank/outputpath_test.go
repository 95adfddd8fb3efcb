package rank

import (
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/node"
)

// A uri_file output is a file in its folder, as Azure ML gives it; a
// folder output, or a file name that is not one plain segment, is the
// folder.
func TestOutputPath(t *testing.T) {
	task := &node.AgentTask{OutputFiles: map[string]string{
		"report": "r.txt", "up": "../x", "dot": "..", "sub": "a/b", "nul": "a\x00b",
	}}
	for name, want := range map[string]string{
		"report": "/o/report/r.txt", "folder": "/o/folder", "up": "/o/up", "dot": "/o/dot", "sub": "/o/sub", "nul": "/o/nul",
	} {
		if got := outputPath(task, "/o", name); got != filepath.FromSlash(want) {
			t.Errorf("outputPath(%s) = %q, want %q", name, got, want)
		}
	}
}
