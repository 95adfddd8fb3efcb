package rank

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// Only a task with an input fetched as files gets an inputs folder; a
// literal input is substituted in the command and needs none.
func TestHasFileInputs(t *testing.T) {
	for name, c := range map[string]struct {
		inputs map[string]*job.JobInput
		want   bool
	}{
		"none":    {nil, false},
		"literal": {map[string]*job.JobInput{"lr": {Value: 0.1}}, false},
		"nil":     {map[string]*job.JobInput{"x": nil}, false},
		"file":    {map[string]*job.JobInput{"lr": {Value: 0.1}, "data": {Path: "art-1", Type: "uri_folder"}}, true},
	} {
		if got := hasFileInputs(&node.AgentTask{Inputs: c.inputs}); got != c.want {
			t.Errorf("%s: hasFileInputs = %v, want %v", name, got, c.want)
		}
	}
}
