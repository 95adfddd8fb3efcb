package runhistory

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

// oneJob is a run history's job service holding a single job.
type oneJob struct{ j *job.Job }

func (o oneJob) FindJob(_ context.Context, _, name string) (*job.Job, error) {
	if name != o.j.Name {
		return nil, core.Errorf(core.ENOTFOUND, "job %q not found", name)
	}
	return o.j, nil
}

func (o oneJob) ListAttempts(context.Context, string, string) ([]*job.Attempt, error) {
	return nil, nil
}

// TestServiceInstances: serviceinstances/{node} answers, in the shape
// azure-ai-ml's show_services reads, the services the job serves on that
// node (a first-node one on node 0 only) with their state, a failed
// one's error as Azure's error envelope; a node that is not an index is
// refused naming nodeId.
func TestServiceInstances(t *testing.T) {
	j := &job.Job{JobSpec: job.JobSpec{Name: "train", Services: map[string]*interactive.Service{
		"web": {Type: interactive.ServiceCustom, Port: 8080, Nodes: "all", Instances: []interactive.ServiceNodeStatus{
			{NodeIndex: 0, Status: interactive.ServiceStatusRunning, Endpoint: "https://apps/0/web/"},
			{NodeIndex: 1, Status: interactive.ServiceStatusFailed, ErrorMessage: "exited"}}},
		"nb": {Type: interactive.ServiceJupyterLab, Instances: []interactive.ServiceNodeStatus{{NodeIndex: 0, Status: interactive.ServiceStatusStarting}}},
	}}}
	h := New(Config{Jobs: oneJob{j}})
	get := func(node string) (int, map[string]any) {
		r := httptest.NewRequest("GET", "/x", nil)
		r.SetPathValue("ws", "default")
		r.SetPathValue("id", "train")
		r.SetPathValue("node", node)
		w := httptest.NewRecorder()
		h.ServiceInstances(w, r)
		var body map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		return w.Code, body
	}
	code, body := get("0")
	want := map[string]any{"instances": map[string]any{
		"web": map[string]any{"type": "Custom", "port": 8080.0, "status": "Running", "endpoint": "https://apps/0/web/"},
		"nb":  map[string]any{"type": "JupyterLab", "status": "Starting"},
	}}
	if code != http.StatusOK || !reflect.DeepEqual(body, want) {
		t.Errorf("node 0: %d %v, want %v", code, body, want)
	}
	code, body = get("1")
	want = map[string]any{"instances": map[string]any{
		"web": map[string]any{"type": "Custom", "port": 8080.0, "status": "Failed", "error": map[string]any{"error": map[string]any{"code": "ServiceFailed", "message": "exited"}}},
	}}
	if code != http.StatusOK || !reflect.DeepEqual(body, want) {
		t.Errorf("node 1: %d %v, want %v", code, body, want)
	}
	for _, bad := range []string{"-1", "x", "1e3"} {
		if code, body := get(bad); code != http.StatusBadRequest || !strings.Contains(strings.ToLower(jsonText(body)), "nodeid") {
			t.Errorf("node %q: %d %v", bad, code, body)
		}
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }
