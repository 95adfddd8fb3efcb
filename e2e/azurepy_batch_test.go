package e2e_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// Batch endpoints through Azure's own Python SDK
// (testdata/azurepy/batch.py): it reads an endpoint and deployment that
// the CLI made from Azure's YAML, creates another endpoint, and invokes
// the deployment; the job it starts is the SDK's service principal's,
// tagged with the endpoint, as `shoal batch-endpoint list-jobs` shows.
func TestAzurePythonSDKBatchEndpoints(t *testing.T) {
	t.Parallel()
	testenv.AzureML(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig, Args: []string{"--tls"}, TLS: true})
	sp := runJSON[map[string]any](t, s.env, "sp", "create", "--name", "sdk-batch", "-o", "json")
	mustRun(t, s.env, "role", "assign", "--sp", "sdk-batch", "--role", "Contributor", "-o", "none")
	createCluster(t, s, "batch-cpu", "--size", "Standard_DS3_v2", "--max-instances", "1")
	dir := writeFiles(t, map[string]string{
		"endpoint.yml": "$schema: https://azuremlschemas.azureedge.net/latest/batchEndpoint.schema.json\nname: digits-batch\ndescription: scores digits\n",
		"deployment.yml": "$schema: https://azuremlschemas.azureedge.net/latest/modelBatchDeployment.schema.json\nname: torch-dpl\nendpoint_name: digits-batch\n" +
			"model: azureml:digits-model@latest\ncode_configuration:\n  code: code\n  scoring_script: score.py\ncompute: azureml:batch-cpu\n" +
			"settings:\n  mini_batch_size: 2\n  output_file_name: predictions.csv\n",
		"code/score.py":     "import os\n\ndef init():\n    pass\n\ndef run(mini_batch):\n    return [os.path.basename(f) + ',' + open(f).read() for f in mini_batch]\n",
		"model/weights.txt": "1",
		"digits/a.txt":      "7", "digits/b.txt": "1", "digits/c.txt": "4",
	})
	mustRun(t, s.env, "model", "create", "--name", "digits-model", "--type", "custom_model", "--path", filepath.Join(dir, "model"), "-o", "none")
	mustRun(t, s.env, "data", "create", "--name", "digits-data", "--version", "1", "--type", "uri_folder", "--path", filepath.Join(dir, "digits"), "-o", "none")
	mustRun(t, s.env, "batch-endpoint", "create", "-f", filepath.Join(dir, "endpoint.yml"), "-o", "none")
	mustRun(t, s.env, "batch-deployment", "create", "-f", filepath.Join(dir, "deployment.yml"), "-o", "none")

	out, steps := runAzurePy(t, s, pyRun{script: "batch.py", sp: sp, env: []string{"ENDPOINT=digits-batch", "INPUT=azureml:digits-data:1"}, timeout: 4 * time.Minute})
	if got := steps["get"]; jsonStr(got["name"]) != "digits-batch" || jsonStr(got["default"]) != "torch-dpl" ||
		!strings.HasSuffix(jsonStr(got["scoring_uri"]), "/api/v1/workspaces/default/batch-endpoints/digits-batch/jobs") {
		t.Errorf("get: %v\n%s", got, out)
	}
	if got := steps["create"]; jsonStr(got["name"]) != "sdk-made" || jsonStr(got["description"]) != "made by the SDK" {
		t.Errorf("create: %v\n%s", got, out)
	}
	if got := fmt.Sprint(steps["deployments"]["names"]); !strings.Contains(got, "torch-dpl") {
		t.Errorf("deployments: %v\n%s", steps["deployments"], out)
	}
	name := jsonStr(steps["invoke"]["name"])
	if name == "" {
		t.Fatalf("invoke: %v\n%s", steps["invoke"], out)
	}
	show := runJSON[map[string]any](t, s.env, "job", "show", "-n", name, "-o", "json")
	tags, _ := show["tags"].(map[string]any)
	par, _ := show["parallel"].(map[string]any)
	if jsonStr(tags["azureml.batchEndpoint"]) != "digits-batch" || jsonStr(par["entry_script"]) != "score.py" || jsonStr(par["append_row_file"]) != "predictions.csv" {
		t.Errorf("the invoked job: %v", show)
	}
	if jobs := mustRun(t, s.env, "batch-endpoint", "list-jobs", "digits-batch"); !strings.Contains(jobs, name) {
		t.Errorf("list-jobs: %s", jobs)
	}
	// The job the SDK streamed scored the data asset's files.
	if got := jsonStr(steps["streamed"]["status"]); got != "Completed" {
		t.Fatalf("the invoked job ended %q\n%s\n%s", got, out, jobLog(t, s, name))
	}
	rows := readRows(t, downloadOutput(t, s, name, "score"), "predictions.csv")
	sort.Strings(rows)
	if strings.Join(rows, " ") != "a.txt,7 b.txt,1 c.txt,4" {
		t.Errorf("predictions.csv: %q, want each file scored once", rows)
	}
}
