package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStudioBatchEndpoint: in a browser, the batch endpoints list leads
// to an endpoint's page, whose invoke form shows the API's refusal next
// to the field it names (an input on the server's disk), then starts a
// job with the deployment chosen and opens the job's page, which shows
// its mini-batches; the endpoint's page then lists the job.
func TestStudioBatchEndpoint(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	admin := s.adminToken(t)
	createCluster(t, s, "batch-cpu", "--size", "Standard_DS3_v2", "--max-instances", "1")
	mustRun(t, s.env, "model", "create", "--name", "digits-model", "--type", "custom_model", "--path", "azureml://datastores/workspaceblobstore/paths/models/digits/", "-o", "none")
	dir := writeFiles(t, map[string]string{
		"endpoint.yml": "name: digits-batch\ndescription: scores digits\n",
		"deployment.yml": "name: torch-dpl\nendpoint_name: digits-batch\nmodel: azureml:digits-model@latest\n" +
			"code_configuration:\n  code: code\n  scoring_script: score.py\ncompute: azureml:batch-cpu\nsettings:\n  mini_batch_size: 2\n",
		"keras.yml": "name: keras-dpl\nendpoint_name: digits-batch\nmodel: azureml:digits-model@latest\n" +
			"code_configuration:\n  code: code\n  scoring_script: score.py\ncompute: azureml:batch-cpu\n",
		"code/score.py": "def init():\n    pass\n\ndef run(mini_batch):\n    return mini_batch\n",
	})
	mustRun(t, s.env, "batch-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"), "-o", "none")
	mustRun(t, s.env, "batch-deployment", "create", "-f", filepath.Join(dir, "deployment.yml"), "-o", "none")
	mustRun(t, s.env, "batch-deployment", "create", "-f", filepath.Join(dir, "keras.yml"), "-o", "none")

	ctx := browser(t)
	signIn(t, ctx, s.url, admin)
	open(t, ctx, "the batch endpoints", s.url+"/batch-endpoints", "#endpoints")
	browse(t, ctx, "the endpoint's page", chromedp.Click(`#endpoints a[href="/batch-endpoints/digits-batch"]`), chromedp.WaitVisible("#invoke-form"))
	shot(t, ctx, "batch-endpoint")
	browse(t, ctx, "invoke on a server path", chromedp.SetValue("#f-input", "/etc"), chromedp.Click(`#invoke-form button[type="submit"]`))
	fieldError(t, ctx, "input", "local path")
	choose(t, ctx, "#f-deployment", "keras-dpl")
	browse(t, ctx, "invoke on a datastore folder", chromedp.SetValue("#f-input", "azureml://datastores/workspaceblobstore/paths/digits/"),
		chromedp.Click(`#invoke-form button[type="submit"]`))
	waitJS(t, ctx, 10*time.Second, "the new job's page", `location.pathname.startsWith("/jobs/") && !!document.getElementById("h-progress")`)
	name := strings.TrimPrefix(js[string](t, ctx, `location.pathname`), "/jobs/")
	if out := mustRun(t, s.env, "job", "show", "-n", name, "--query", "tags", "-o", "json"); !strings.Contains(out, `"keras-dpl"`) || !strings.Contains(out, `"digits-batch"`) {
		t.Errorf("the form's job %s is not the chosen deployment's: %s", name, out)
	}
	open(t, ctx, "the endpoint's jobs", s.url+"/batch-endpoints/digits-batch", "#endpoint-jobs")
	if got := js[string](t, ctx, `document.getElementById("endpoint-jobs").textContent`); !strings.Contains(got, name) {
		t.Errorf("the endpoint's page does not list %s: %q", name, got)
	}
}
