package e2e_test

import (
	"strings"
	"testing"
	"time"
)

// TestAzurePythonSDKNotebook runs the notebook-style flow of
// docs/guides/azure-sdks.md with Azure's own Python SDK (Debian's
// azure-ai-ml 1.4.0; testdata/azurepy/notebook.py) against `shoal server
// --tls`, changing only the endpoint and the credential: a command() job
// with local code (uploaded through Shoal's Blob endpoint) and an inline
// image environment (a container from the test registry: nothing here
// reaches Docker Hub), streamed until it completes with its output
// printed by jobs.stream, read, listed and downloaded; a data asset
// registered from a local file; a two-step @dsl.pipeline passing a
// folder; a .sweep() with early termination; a job cancelled. As in
// TestAzureBlobPython, the script runs in a mount namespace whose
// /etc/hosts maps shoal.blob.core.windows.net to a relay of port 443.
func TestAzurePythonSDKNotebook(t *testing.T) {
	t.Parallel()
	nb := startNotebookEnv(t, fastJobsConfig)
	s := nb.s
	createCluster(t, s, "nb-cluster", "--size", "Standard_DS3_v2", "--max-instances", "1", "--idle-time-before-scale-down", "300")
	text, steps := nb.run(t, "notebook.py", 12*time.Minute, "CLUSTER=nb-cluster")
	wantSteps(t, steps, map[string]map[string]any{
		"submitted":         {"studio": true},
		"completed":         {"status": "Completed"},
		"listed":            {"found": true},
		"downloaded":        {"result": "kept"},
		"data":              {"name": "nb-iris", "version": "1"},
		"pipeline":          {"status": "Completed"},
		"pipeline_download": {"passed": "hello from the notebook's code"},
		"sweep":             {"status": "Completed", "trials": float64(2)},
		"sweep_download":    {"lr": "0.1"},
		"pipeline_step":     {"code_version": true},
		"pipeline_sweep":    {"status": "Completed"},
		"cancel":            {"status": "Canceled"},
	})
	// jobs.stream printed the job's own output, and the pipeline's second
	// step read the folder the first passed and the registered asset.
	for _, w := range []string{"hello from the notebook's code", "lr=0.1", "Execution Summary"} {
		if !strings.Contains(text, w) {
			t.Errorf("the streamed output lacks %q", w)
		}
	}
	if code := jsonStr(steps["completed"]["code"]); !strings.Contains(code, "/codes/") {
		t.Errorf("the job read back names its code %q, want the code version's ARM id", code)
	}
	if path := jsonStr(steps["data"]["path"]); !strings.Contains(path, "workspaceblobstore") {
		t.Errorf("the data asset's path %q, want the upload on workspaceblobstore", path)
	}
	var use string
	list, _ := steps["pipeline"]["steps"].([]any)
	for _, st := range list {
		pair, _ := st.([]any)
		if len(pair) != 2 {
			continue
		}
		if name, display := jsonStr(pair[0]), jsonStr(pair[1]); display == "second" || strings.HasSuffix(name, "-second") {
			use = name
		}
	}
	if steps["pipeline_failed"] != nil {
		for _, st := range list {
			if pair, _ := st.([]any); len(pair) == 2 {
				t.Errorf("pipeline step %s: %s", jsonStr(pair[0]), mustRun(t, s.env, "job", "show", "--name", jsonStr(pair[0]), "--query", "[status, error]", "-o", "tsv"))
			}
		}
	}
	if use == "" {
		t.Errorf("the pipeline's steps %v: none is the use step", steps["pipeline"]["steps"])
	} else if log := jobLog(t, s, use); !strings.Contains(log, "hello from the notebook's code") || !strings.Contains(log, "sepal_length") {
		t.Errorf("the pipeline's second step %s:\n%s", use, log)
	}
	if t.Failed() {
		t.Logf("notebook.py's output:\n%s", text)
	}
}
