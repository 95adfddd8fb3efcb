package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
)

// Azure's ARM routes for batch endpoints and deployments take the bodies
// azure-ai-ml 1.4.0 sends (BatchEndpointData, BatchDeploymentData) and
// answer Azure's shapes, with the endpoint's scoring URI; a POST there
// (what ml_client.batch_endpoints.invoke sends: a BatchJobResource, the
// deployment in azureml-model-deployment) starts the job, as the caller.
func TestBatchEndpointARM(t *testing.T) {
	e := newTestEnv(t)
	code := batchSetup(t, e)
	const q = "?api-version=2022-05-01"
	base := armWS + "/batchEndpoints"
	carl := addUser(t, e, "carl", identity.RoleContributor)

	ep := mustSend(t, e, carl, "PUT", base+"/digits"+q, `{"location":"westus","tags":{"a":"b"},"properties":{"authMode":"AADToken","description":"scores digits"}}`, http.StatusCreated).json(t)
	props, _ := ep["properties"].(map[string]any)
	scoring, _ := props["scoringUri"].(string)
	if ep["name"] != "digits" || props["provisioningState"] != "Succeeded" || !strings.HasSuffix(scoring, "/api/v1/workspaces/default/batch-endpoints/digits/jobs") || !strings.HasPrefix(scoring, e.ts.URL) {
		t.Fatalf("endpoint: %v", ep)
	}
	if r := send(t, e, carl, "PUT", base+"/digits"+q, `{"properties":{"authMode":"Key"}}`, nil); r.status != 400 || errTarget(t, r) != "properties.authMode" {
		t.Errorf("authMode Key: %s", r)
	}
	// A deployment made natively (the code uploaded), read through ARM.
	mustSend(t, e, carl, "PUT", "/api/v1/workspaces/default/batch-endpoints/digits/deployments/torch", deploymentDoc(code, ""), http.StatusCreated)
	dep := mustSend(t, e, carl, "GET", base+"/digits/deployments/torch"+q, "", http.StatusOK).json(t)
	dp, _ := dep["properties"].(map[string]any)
	model, _ := dp["model"].(map[string]any)
	if dp["outputFileName"] != "out.csv" || dp["outputAction"] != "AppendRow" || dp["miniBatchSize"] != float64(5) || !strings.HasSuffix(dp["compute"].(string), "/computes/cpu") || model["referenceType"] != "Id" {
		t.Errorf("deployment: %v", dep)
	}
	if list := mustSend(t, e, carl, "GET", base+"/digits/deployments"+q, "", http.StatusOK).json(t); len(list["value"].([]any)) != 1 {
		t.Errorf("deployments: %v", list)
	}
	// An ARM deployment naming another workspace's model is refused.
	r := send(t, e, carl, "PUT", base+"/digits/deployments/keras"+q, `{"location":"westus","properties":{"model":{"referenceType":"Id","assetId":"azureml:/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/other/models/m/versions/1"},
		"compute":"azureml:cpu","codeConfiguration":{"scoringScript":"s.py"}}}`, nil)
	if r.status != 400 || errTarget(t, r) != "properties.model.assetId" {
		t.Errorf("another workspace's model: %s", r)
	}

	// The SDK's invoke: a data asset's ARM id, keyed UriFolder.
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/data", `{"name":"digits-data","type":"uri_folder","path":"azureml://datastores/workspaceblobstore/paths/digits/"}`, http.StatusCreated)
	body := `{"properties":{"inputData":{"UriFolder":{"jobInputType":"UriFolder","uri":"azureml:` + armWS + `/data/digits-data/versions/1"}}}}`
	req, _ := http.NewRequest("POST", scoring, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+carl)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("azureml-model-deployment", "torch")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job map[string]any
	json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	name, _ := job["name"].(string)
	if resp.StatusCode != 200 || name == "" {
		t.Fatalf("invoke: %d %v", resp.StatusCode, job)
	}
	got := mustSend(t, e, carl, "GET", "/api/v1/workspaces/default/jobs/"+name, "", http.StatusOK).json(t)
	in := got["inputs"].(map[string]any)["input_data"].(map[string]any)
	if in["path"] != "azureml:digits-data:1" || in["asset"] != "digits-data:1" || got["created_by"] != "carl" {
		t.Errorf("the invoked job: %v", got)
	}
	// A deployment the endpoint does not have, named in the header.
	req, _ = http.NewRequest("POST", scoring, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+carl)
	req.Header.Set("azureml-model-deployment", "tf")
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 404 {
		t.Errorf("invoke naming a deployment not there: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	mustSend(t, e, carl, "DELETE", base+"/digits/deployments/torch"+q, "", http.StatusOK)
	mustSend(t, e, carl, "DELETE", base+"/digits"+q, "", http.StatusOK)
	mustSend(t, e, carl, "DELETE", base+"/digits"+q, "", http.StatusNoContent)
}
