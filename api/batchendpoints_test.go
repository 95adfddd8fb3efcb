package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
)

// batchSetup makes what a deployment names: a cluster "cpu", a
// registered model "digits-model" and an uploaded code folder (its id).
func batchSetup(t *testing.T, e *testEnv) string {
	t.Helper()
	maxN := 2
	if _, _, err := e.svc.CreateOrApplyCompute(context.Background(), "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/models",
		`{"name":"digits-model","type":"custom_model","path":"azureml://datastores/workspaceblobstore/paths/models/digits/"}`, http.StatusCreated)
	r := mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/artifacts", string(buildContext(t)), http.StatusCreated)
	id, _ := r.json(t)["id"].(string)
	return id
}

func deploymentDoc(code, extra string) string {
	return `{"endpoint_name":"digits","type":"model","model":"azureml:digits-model@latest",
		"code_configuration":{"code":"` + code + `","scoring_script":"score.py"},"compute":"azureml:cpu",
		"resources":{"instance_count":2},"settings":{"mini_batch_size":5,"max_concurrency_per_instance":2,"output_file_name":"out.csv"}` + extra + `}`
}

func errTarget(t *testing.T, r reply) string {
	t.Helper()
	var out struct {
		Error struct {
			Target string `json:"target"`
		} `json:"error"`
	}
	json.Unmarshal(r.body, &out)
	return out.Error.Target
}

// An endpoint with a deployment of a registered model, invoked on a
// datastore folder, submits a parallel job as the invoker: the scoring
// script as the entry script, the model as input "model" (its version
// resolved), output score with the deployment's file name; list-jobs
// finds it. What a deployment names must exist, each refusal naming its
// field, and nothing refused is stored.
func TestBatchEndpointInvoke(t *testing.T) {
	e := newTestEnv(t)
	code := batchSetup(t, e)
	const base = "/api/v1/workspaces/default/batch-endpoints"
	reader := addUser(t, e, "rita", identity.RoleReader)
	contributor := addUser(t, e, "carl", identity.RoleContributor)

	if r := send(t, e, reader, "PUT", base+"/digits", `{"name":"digits"}`, nil); r.status != http.StatusForbidden {
		t.Errorf("a Reader's create: %s, want 403", r)
	}
	mustSend(t, e, contributor, "PUT", base+"/digits", `{"name":"digits","description":"scores digits","auth_mode":"aad_token"}`, http.StatusCreated)
	mustSend(t, e, contributor, "PUT", base+"/digits", `{"description":"again"}`, http.StatusOK)
	if r := send(t, e, contributor, "PUT", base+"/digits", `{"name":"other"}`, nil); r.status != 400 || errTarget(t, r) != "name" {
		t.Errorf("a document naming another endpoint: %s", r)
	}
	// No deployment yet: invoke says so, naming the field.
	if r := send(t, e, contributor, "POST", base+"/digits/invoke", `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"}}`, nil); r.status != 400 || errTarget(t, r) != "deployment_name" {
		t.Errorf("invoke without a deployment: %s", r)
	}

	for _, bad := range []struct{ doc, target string }{
		{strings.Replace(deploymentDoc(code, ""), "digits-model", "nope", 1), "model"},
		{strings.Replace(deploymentDoc(code, ""), "azureml:cpu", "gpu", 1), "compute"},
		{deploymentDoc("sha256:"+strings.Repeat("ab", 32), ""), "code_configuration.code"},
		{deploymentDoc("./code", ""), "code_configuration.code"},
		{deploymentDoc(code, `,"environment_variables":{"SHOAL_PARALLEL_DRIVER":"/tmp/evil.py"}`), "environment_variables.SHOAL_PARALLEL_DRIVER"},
	} {
		r := send(t, e, contributor, "PUT", base+"/digits/deployments/torch", bad.doc, nil)
		if r.status < 400 || r.status >= 500 || errTarget(t, r) != bad.target {
			t.Errorf("%s: %s (target %q), want a refusal naming %s", bad.doc, r, errTarget(t, r), bad.target)
		}
	}
	if r := send(t, e, contributor, "PUT", base+"/nope/deployments/torch", strings.Replace(deploymentDoc(code, ""), `"digits"`, `"nope"`, 1), nil); r.status != 404 || errTarget(t, r) != "endpoint_name" {
		t.Errorf("a deployment of an endpoint not there: %s", r)
	}
	mustSend(t, e, contributor, "GET", base+"/digits/deployments", "", http.StatusOK)
	if r := mustSend(t, e, reader, "GET", base+"/digits/deployments", "", http.StatusOK); strings.Contains(string(r.body), "torch") {
		t.Fatalf("a refused deployment was stored: %s", r.body)
	}

	mustSend(t, e, contributor, "PUT", base+"/digits/deployments/torch", deploymentDoc(code, ""), http.StatusCreated)
	mustSend(t, e, contributor, "PUT", base+"/digits/deployments/keras", deploymentDoc(code, `,"settings":{"output_action":"summary_only"}`), http.StatusCreated)
	ep := mustSend(t, e, reader, "GET", base+"/digits", "", http.StatusOK).json(t)
	if d, _ := ep["defaults"].(map[string]any); d["deployment_name"] != "torch" || ep["description"] != "again" {
		t.Fatalf("the first deployment is the default: %v", ep)
	}

	if r := send(t, e, reader, "POST", base+"/digits/invoke", `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"}}`, nil); r.status != http.StatusForbidden {
		t.Errorf("a Reader's invoke: %s, want 403", r)
	}
	if r := send(t, e, contributor, "POST", base+"/digits/invoke", `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"},"deployment_name":"tf"}`, nil); r.status != 404 || errTarget(t, r) != "deployment_name" {
		t.Errorf("invoke naming a deployment not there: %s", r)
	}
	if r := send(t, e, contributor, "POST", base+"/digits/invoke", `{"input":{"path":"/etc"}}`, nil); r.status != 400 || errTarget(t, r) != "input" {
		t.Errorf("invoke on a server path: %s", r)
	}
	r := mustSend(t, e, contributor, "POST", base+"/digits/invoke", `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"}}`, http.StatusCreated)
	var j job.Job
	if err := json.Unmarshal(r.body, &j); err != nil {
		t.Fatal(err)
	}
	p := j.Parallel
	if p == nil || p.EntryScript != "score.py" || p.AppendRowFile != "out.csv" || p.AppendRowTo != "${{outputs.score}}" || p.ModelInput != "model" || p.Concurrency() != 2 {
		t.Fatalf("the invocation's job: %s", r.body)
	}
	if j.Inputs["model"].Asset != "digits-model:1" || j.Inputs["input_data"].Type != "uri_folder" || j.Code != code || j.Compute != "cpu" || j.InstanceCount() != 2 ||
		j.CreatedBy != "carl" || j.Tags["azureml.batchEndpoint"] != "digits" || j.Tags["azureml.batchDeployment"] != "torch" || j.Command != job.ParallelCommand("") {
		t.Fatalf("the invocation's job: %s", r.body)
	}
	r = mustSend(t, e, contributor, "POST", base+"/digits/invoke", `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"},"deployment_name":"keras"}`, http.StatusCreated)
	var summary job.Job
	if err := json.Unmarshal(r.body, &summary); err != nil || summary.Parallel.AppendRowTo != "" {
		t.Fatalf("summary_only keeps rows: %s", r.body)
	}
	jobs := mustSend(t, e, reader, "GET", base+"/digits/jobs", "", http.StatusOK)
	var list struct{ Value []job.Job }
	if err := json.Unmarshal(jobs.body, &list); err != nil || len(list.Value) != 2 {
		t.Fatalf("list-jobs: %s", jobs.body)
	}

	// The default goes only when it is the last.
	if r := send(t, e, contributor, "DELETE", base+"/digits/deployments/torch", "", nil); r.status != http.StatusConflict {
		t.Errorf("deleting the default while another remains: %s, want 409", r)
	}
	mustSend(t, e, contributor, "DELETE", base+"/digits/deployments/keras", "", http.StatusNoContent)
	mustSend(t, e, contributor, "DELETE", base+"/digits/deployments/torch", "", http.StatusNoContent)
	mustSend(t, e, contributor, "DELETE", base+"/digits", "", http.StatusNoContent)
	mustSend(t, e, contributor, "GET", base+"/digits", "", http.StatusNotFound)
	// The jobs stay.
	mustSend(t, e, reader, "GET", "/api/v1/workspaces/default/jobs/"+j.Name, "", http.StatusOK)
}

// Attack: a deployment whose settings no invocation can run (a scoring
// script that is not a Python file or spans lines, an output file name
// with control characters or past the length a file name may have,
// concurrency, retries or a timeout past the bounds a parallel job
// takes) is refused when it is created, naming the deployment's own
// field, rather than stored for every invoke to fail on. What it
// accepts, an invoke runs (a lower-case logging level included).
func TestBatchDeploymentRefusesWhatNoInvokeRuns(t *testing.T) {
	e := newTestEnv(t)
	code := batchSetup(t, e)
	const base = "/api/v1/workspaces/default/batch-endpoints"
	carl := addUser(t, e, "carl", identity.RoleContributor)
	mustSend(t, e, carl, "PUT", base+"/digits", `{"name":"digits"}`, http.StatusCreated)
	settings := func(s string) string {
		return strings.Replace(deploymentDoc(code, ""), `"output_file_name":"out.csv"`, s, 1)
	}
	for _, bad := range []struct{ doc, target string }{
		{strings.Replace(deploymentDoc(code, ""), `"score.py"`, `"score.txt"`, 1), "code_configuration.scoring_script"},
		{strings.Replace(deploymentDoc(code, ""), `"score.py"`, `"sc\nore.py"`, 1), "code_configuration.scoring_script"},
		{settings(`"output_file_name":"a\tb.csv"`), "settings.output_file_name"},
		{settings(`"output_file_name":"` + strings.Repeat("p", 300) + `.csv"`), "settings.output_file_name"},
		{settings(`"max_concurrency_per_instance":1000000`), "settings.max_concurrency_per_instance"},
		{settings(`"retry_settings":{"max_retries":100000000}`), "settings.retry_settings.max_retries"},
		{settings(`"retry_settings":{"timeout":99999999999}`), "settings.retry_settings.timeout"},
	} {
		r := send(t, e, carl, "PUT", base+"/digits/deployments/torch", bad.doc, nil)
		if r.status != http.StatusBadRequest || errTarget(t, r) != bad.target {
			t.Errorf("%.160s: %s (target %q), want 400 naming %s", bad.doc, r, errTarget(t, r), bad.target)
			mustSend(t, e, carl, "DELETE", base+"/digits/deployments/torch", "", http.StatusNoContent)
		}
	}
	mustSend(t, e, carl, "PUT", base+"/digits/deployments/torch", settings(`"logging_level":"debug"`), http.StatusCreated)
	mustSend(t, e, carl, "POST", base+"/digits/invoke", `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"}}`, http.StatusCreated)
	// Hostile names in the path never reach the store.
	for _, name := range []string{"..", "%2e%2e", "a%2fb", strings.Repeat("n", 300), "d%C3%A9ploy", "x%00y"} {
		if r := send(t, e, carl, "PUT", base+"/digits/deployments/"+name, deploymentDoc(code, ""), nil); r.status/100 != 4 {
			t.Errorf("a deployment named %.40q: %s, want a refusal", name, r)
		}
	}
}
