package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// notebookEnv is a `shoal server --tls` for Azure's notebooks run with
// Azure's own Python SDK: a service principal with Contributor, the test
// registry's image, and an /etc/hosts mapping shoal.blob.core.windows.net
// to a relay of the server's port on 443 (what azure-ai-ml 1.4 dials).
type notebookEnv struct {
	s     *server
	sp    map[string]any
	hosts string
	image string
}

// startNotebookEnv starts a notebookEnv whose server runs config, with
// the curated environments named mapped to the test image.
func startNotebookEnv(t *testing.T, config string, curated ...string) *notebookEnv {
	t.Helper()
	testenv.AzureML(t)
	testenv.Root(t, "mounts a private /etc/hosts in a mount namespace and listens on port 443")
	env := testctr.Shared(t)
	nb := &notebookEnv{image: env.Registry.Addr + "/" + testctr.PushedBase}
	if len(curated) > 0 {
		config += "curated_environments:\n"
		for _, name := range curated {
			config += "  " + name + ": " + nb.image + "\n"
		}
	}
	nb.s = startServer(t, serverOpts{Config: config, Args: []string{"--tls"}, TLS: true,
		Env: []string{"SHOAL_AGENT_CONTAINER_HOST=" + env.Host}})
	nb.sp = runJSON[map[string]any](t, nb.s.env, "sp", "create", "--name", "sdk-notebook", "-o", "json")
	mustRun(t, nb.s.env, "role", "assign", "--sp", "sdk-notebook", "--role", "Contributor", "-o", "none")
	ip := relay443(t, nb.s.addr)
	nb.hosts = filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(nb.hosts, []byte("127.0.0.1 localhost\n"+ip+" shoal.blob.core.windows.net\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return nb
}

// run runs script of testdata/azurepy with env added.
func (nb *notebookEnv) run(t *testing.T, script string, timeout time.Duration, env ...string) (string, map[string]map[string]any) {
	t.Helper()
	return runAzurePy(t, nb.s, pyRun{script: script, sp: nb.sp, hosts: nb.hosts, timeout: timeout,
		env: append([]string{"IMAGE=" + nb.image}, env...)})
}

// wantSteps fails t for each field of want that steps lacks.
func wantSteps(t *testing.T, steps map[string]map[string]any, want map[string]map[string]any) {
	t.Helper()
	for step, fields := range want {
		for k, v := range fields {
			if got := steps[step][k]; got != v {
				t.Errorf("step %s: %s = %v, want %v", step, k, got, v)
			}
		}
	}
}

// TestAzurePythonSDKSklearnNotebook runs Azure's notebook
// sdk/python/jobs/single-step/scikit-learn/train-hyperparameter-tune-
// deploy-with-sklearn (testdata/azurepy/nb_sklearn_sweep.py: its cells,
// with the differences its docstring lists) against Shoal: the cluster
// created through the SDK, an environment registered from a conda file
// and an image, a command job with local code, a sweep streamed to its
// end, and the best trial's model registered from its artifacts with
// azureml://jobs/<best>/outputs/artifacts/paths/...; a job then reads
// that model and finds the best trial's files, and models.download
// brings them back.
func TestAzurePythonSDKSklearnNotebook(t *testing.T) {
	t.Parallel()
	nb := startNotebookEnv(t, fastJobsConfig)
	text, steps := nb.run(t, "nb_sklearn_sweep.py", 10*time.Minute, "CLUSTER=cpu-cluster")
	wantSteps(t, steps, map[string]map[string]any{
		"compute":           {"name": "cpu-cluster", "created": true},
		"environment":       {"name": "sklearn-env", "version": "1"},
		"environment_image": {"name": "sklearn-env", "version": "2"},
		"command":           {"display_name": "sklearn-classify-iris-flower-images"},
		"sweep":             {"status": "Completed"},
		"model":             {"name": "run-model-example", "version": "1"},
		"model_read":        {"status": "Completed"},
	})
	if steps["sweep_failed"] != nil {
		for _, tr := range steps["sweep_failed"]["trials"].([]any) {
			if pair, _ := tr.([]any); len(pair) == 2 {
				t.Errorf("trial %s: %s", jsonStr(pair[0]), mustRun(t, nb.s.env, "job", "show", "--name", jsonStr(pair[0]), "--query", "[status, error]", "-o", "tsv"))
			}
		}
	}
	best := jsonStr(steps["model"]["best"])
	if best == "" || !strings.HasPrefix(best, jsonStr(steps["sweep"]["name"])) {
		t.Errorf("best_child_run_id %q, want one of sweep %s's trials", best, jsonStr(steps["sweep"]["name"]))
	}
	// The model names the place the trial's artifacts are kept, not the
	// job URI (which names no place a reader could open).
	if p := jsonStr(steps["model"]["path"]); !strings.Contains(p, "workspaceartifactstore") || !strings.Contains(p, best) {
		t.Errorf("the model's path %q, want the best trial's artifacts on workspaceartifactstore", p)
	}
	// The reader printed the best trial's model: the linear kernel's
	// (Accuracy 0.97) or, when random sampling drew rbf twice, rbf's.
	kernel := "rbf"
	if strings.Contains(text, "best trial "+best+": Accuracy 0.97") {
		kernel = "linear"
	}
	if !strings.Contains(text, "\nSVC kernel="+kernel+" C=1\n") {
		t.Errorf("the job reading the model did not print the best trial's model (kernel %s)", kernel)
	}
	if files, _ := steps["model_download"]["files"].([]any); len(files) != 1 || jsonStr(files[0]) != "run-model-example/sklearn-iris-flower-classify-model/model.txt" {
		t.Errorf("models.download brought back %v, want the best trial's model.txt", steps["model_download"]["files"])
	}
	if t.Failed() {
		t.Logf("nb_sklearn_sweep.py's output:\n%s", text)
	}
}

// TestAzurePythonSDKTrainModelTutorial runs Azure's tutorial
// tutorials/get-started-notebooks/train-model (testdata/azurepy/
// nb_train_model.py, with the differences its docstring lists): the
// workspace read, an environment registered with tags, a command job
// with local code and a local CSV input (both uploaded through the Blob
// endpoint) naming the environment @latest, streamed to its end.
func TestAzurePythonSDKTrainModelTutorial(t *testing.T) {
	t.Parallel()
	nb := startNotebookEnv(t, fastJobsConfig)
	createCluster(t, nb.s, "cpu-cluster", "--size", "Standard_DS3_v2", "--max-instances", "1")
	text, steps := nb.run(t, "nb_train_model.py", 8*time.Minute, "CLUSTER=cpu-cluster")
	wantSteps(t, steps, map[string]map[string]any{
		"workspace":   {"name": "default", "resource_group": "any-rg"},
		"environment": {"name": "aml-scikit-learn", "version": "1"},
		"submitted":   {"display_name": "credit_default_prediction", "studio": true},
		"completed":   {"status": "Completed"},
	})
	// The job read the uploaded file: 50 rows, 10 of them kept for test.
	for _, w := range []string{"test_train_ratio=0.2", "registered_model_name=credit_defaults_model", "Training with data of shape (40, 5)"} {
		if !strings.Contains(text, w) {
			t.Errorf("the streamed output lacks %q", w)
		}
	}
	if tags, _ := steps["environment"]["tags"].(map[string]any); tags["scikit-learn"] != "1.0.2" {
		t.Errorf("the environment's tags %v, want scikit-learn: 1.0.2", steps["environment"]["tags"])
	}
	if t.Failed() {
		t.Logf("nb_train_model.py's output:\n%s", text)
	}
}

// TestAzurePythonSDKPipelineFromYAMLNotebook runs Azure's notebook
// sdk/python/jobs/pipelines/1a_pipeline_with_components_from_yaml
// (testdata/azurepy/nb_pipeline_yaml.py): components loaded from YAML
// with their code folders and Azure's curated sklearn-1.5 environment
// (mapped by curated_environments), a @pipeline over a local folder,
// streamed to its end; the evaluation report downloaded holds what the
// three steps passed along.
func TestAzurePythonSDKPipelineFromYAMLNotebook(t *testing.T) {
	t.Parallel()
	nb := startNotebookEnv(t, fastJobsConfig, "sklearn-1.5")
	createCluster(t, nb.s, "cpu-cluster", "--size", "Standard_DS3_v2", "--max-instances", "1")
	text, steps := nb.run(t, "nb_pipeline_yaml.py", 8*time.Minute, "CLUSTER=cpu-cluster")
	wantSteps(t, steps, map[string]map[string]any{
		"pipeline": {"status": "Completed"},
		"report":   {"text": "rows=3 epochs=20 lr=1.8 schedule=time-based scored sample.csv"},
	})
	if list, _ := steps["pipeline"]["steps"].([]any); len(list) != 3 {
		t.Errorf("the pipeline's steps %v, want 3", steps["pipeline"]["steps"])
	}
	if t.Failed() {
		t.Logf("nb_pipeline_yaml.py's output:\n%s", text)
	}
}

// TestAzurePythonSDKDistributedCifarNotebook runs Azure's notebook
// sdk/python/jobs/single-step/pytorch/distributed-training/
// distributed-cifar10 (testdata/azurepy/nb_cifar_distributed.py, with
// the differences its docstring lists): a job writes its output at a
// long-form datastore URI of its choosing on workspaceblobstore, and a
// two-node PyTorch job on serverless compute, in a curated environment
// named azureml:AzureML-...@latest, reads it there.
func TestAzurePythonSDKDistributedCifarNotebook(t *testing.T) {
	t.Parallel()
	nb := startNotebookEnv(t, fastJobsConfig, "sklearn-1.5", "AzureML-acpt-pytorch-2.8-cuda12.6")
	text, steps := nb.run(t, "nb_cifar_distributed.py", 8*time.Minute)
	wantSteps(t, steps, map[string]map[string]any{
		"prepared": {"status": "Completed"},
		"trained":  {"status": "Completed"},
	})
	if p := jsonStr(steps["prepared"]["path"]); !strings.HasSuffix(p, "/datastores/workspaceblobstore/paths/CIFAR-10") {
		t.Errorf("the first job's output path %q, want the notebook's CIFAR-10 on workspaceblobstore", p)
	}
	if c := jsonStr(steps["trained"]["compute"]); !strings.Contains(c, "sls-") {
		t.Errorf("the training job ran on %q, want a serverless pool", c)
	}
	// Rank 0's log, streamed: of two processes, it read what the first
	// job unpacked, by the path that job declared.
	if !strings.Contains(text, "rank 0 of 2 (master True) epochs 10 found cifar-10-batches-py/data_batch_1") {
		t.Errorf("the training job's rank 0 did not read the unpacked data")
	}
	if t.Failed() {
		t.Logf("nb_cifar_distributed.py's output:\n%s", text)
	}
}
