package rank

import (
	"testing"

	"github.com/shoal-ml/shoal"
)

// Only a task with an input fetched as files gets an inputs folder; a
// literal input is substituted in the command and needs none.
func TestHasFileInputs(t *testing.T) {
	for name, c := range map[string]struct {
		inputs map[string]*shoal.JobInput
		want   bool
	}{
		"none":    {nil, false},
		"literal": {map[string]*shoal.JobInput{"lr": {Value: 0.1}}, false},
		"nil":     {map[string]*shoal.JobInput{"x": nil}, false},
		"file":    {map[string]*shoal.JobInput{"lr": {Value: 0.1}, "data": {Path: "art-1", Type: "uri_folder"}}, true},
	} {
		if got := hasFileInputs(&shoal.AgentTask{Inputs: c.inputs}); got != c.want {
			t.Errorf("%s: hasFileInputs = %v, want %v", name, got, c.want)
		}
	}
}
