package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
)

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
