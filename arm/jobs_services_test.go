package arm_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job/interactive"
)

// A job's services through ARM: the SDK's JobService (jobServiceType,
// port, nodes {nodesValueType: All}) becomes the YAML's services; the
// answer has them in Azure's shape beside Studio and Tracking, with
// their state while the job runs, and PUT back they are the same job;
// an unknown nodesValueType is refused naming the field.
func TestJobServicesThroughARM(t *testing.T) {
	body := `{"properties":{"jobType":"Command","command":"x","services":{
		"web":{"jobServiceType":"Custom","port":8080,"nodes":{"nodesValueType":"All"}},
		"nb":{"jobServiceType":"JupyterLab","nodes":null},
		"Studio":{"jobServiceType":"Studio","endpoint":"https://elsewhere"}}}}`
	j := decodeJob(t, translate(t, []byte(body), nil))
	if err := interactive.NormalizeJobServices("services", j.Services); err != nil {
		t.Fatal(err)
	}
	web, nb := j.Services["web"], j.Services["nb"]
	if len(j.Services) != 2 || web == nil || web.Type != interactive.ServiceCustom || web.Port != 8080 || web.Nodes != "all" || nb == nil || nb.Type != interactive.ServiceJupyterLab || nb.Nodes != "" {
		t.Fatalf("services from ARM: %+v", j.Services)
	}
	web.Status, web.Endpoint = interactive.ServiceStatusRunning, "https://apps.example/api/v1/workspaces/default/jobs/j1/nodes/0/applications/web/"
	nb.Status, nb.ErrorMessage = interactive.ServiceStatusFailed, "the job's environment has no Jupyter Lab"
	b, _ := json.Marshal(armjob.ToJobResource(arm.Scope{Subscription: "s", ResourceGroup: "rg"}, "https://shoal.example", j))
	var back struct {
		Properties struct {
			Services map[string]map[string]any `json:"services"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	s := back.Properties.Services
	want := map[string]any{"jobServiceType": "Custom", "port": 8080.0, "nodes": map[string]any{"nodesValueType": "All"}, "status": "Running", "endpoint": web.Endpoint}
	if !reflect.DeepEqual(s["web"], want) {
		t.Errorf("web as ARM answers it: %v, want %v", s["web"], want)
	}
	if s["nb"]["jobServiceType"] != "JupyterLab" || s["nb"]["status"] != "Failed" || s["nb"]["errorMessage"] != nb.ErrorMessage {
		t.Errorf("nb as ARM answers it: %v", s["nb"])
	}
	if s["Studio"]["endpoint"] != "https://shoal.example/jobs/j1?workspace=default" || s["Tracking"] == nil {
		t.Errorf("Azure's own services: %v", s)
	}
	again := decodeJob(t, translate(t, b, nil))
	if err := interactive.NormalizeJobServices("services", again.Services); err != nil {
		t.Fatal(err)
	}
	web.Status, web.Endpoint, nb.Status, nb.ErrorMessage = "", "", "", ""
	if !reflect.DeepEqual(again.Services, j.Services) {
		t.Errorf("PUT back: %+v, want %+v", again.Services, j.Services)
	}
	bad := `{"properties":{"jobType":"Command","command":"x","services":{"web":{"jobServiceType":"Custom","port":1,"nodes":{"nodesValueType":"Some"}}}}}`
	if _, err := armjob.JobDocument(context.Background(), "default", "j", []byte(bad), nil); core.ErrorField(err) != "properties.services.web.nodes.nodesValueType" {
		t.Errorf("an unknown nodesValueType: %v (field %q)", err, core.ErrorField(err))
	}
}
