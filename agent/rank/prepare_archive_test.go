package rank

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"testing"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/archive"
)

// tarGz builds a tar.gz of the given headers (each regular file holding
// its name as content).
func tarGz(t *testing.T, hdrs ...*tar.Header) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, h := range hdrs {
		body := []byte(h.Name)
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	gz.Close()
	return &b
}

// An archive refused for safety (an entry escaping the folder, a link
// out of it, more than the limits) is the job's fault and fails the job
// at once; it is not a node loss, which requeues the job up to
// MaxInfraRequeues times only to be refused again on every node.
func TestRefusedArchiveFailsTheRankNotTheNode(t *testing.T) {
	for name, c := range map[string]struct {
		archive *bytes.Buffer
		limits  archive.Limits
	}{
		"path escape": {archive: tarGz(t, &tar.Header{Name: "../../escape.txt", Typeflag: tar.TypeReg, Mode: 0o644})},
		"symlink out": {archive: tarGz(t, &tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc"}, &tar.Header{Name: "link/passwd", Typeflag: tar.TypeReg, Mode: 0o644})},
		"hard link":   {archive: tarGz(t, &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"})},
		"too big":     {archive: tarGz(t, &tar.Header{Name: "a.txt", Typeflag: tar.TypeReg, Mode: 0o644}), limits: archive.Limits{MaxBytes: 2}},
		"too many":    {archive: tarGz(t, &tar.Header{Name: "a", Typeflag: tar.TypeReg, Mode: 0o644}, &tar.Header{Name: "b", Typeflag: tar.TypeReg, Mode: 0o644}), limits: archive.Limits{MaxFiles: 1}},
	} {
		err := archive.Unpack(c.archive, t.TempDir(), c.limits)
		if err == nil {
			t.Fatalf("%s: unpacked", name)
		}
		// As prepare wraps it.
		err = fmt.Errorf("code: %w", err)
		if got := prepareFailureState(err); got != node.RankFailed {
			t.Errorf("%s: %v: state %s, want %s", name, err, got, node.RankFailed)
		}
	}
	// Losing the server mid-download is still the infrastructure's.
	if got := prepareFailureState(fmt.Errorf("code: %w", fmt.Errorf("connection reset"))); got != node.RankLost {
		t.Errorf("a network error: %s, want %s", got, node.RankLost)
	}
}
