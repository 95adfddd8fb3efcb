package e2e_test

import (
	"testing"
	"time"
)

// TestAzurePythonSDKParallel: azure-ai-ml 1.4.0's parallel_run_function
// in a @dsl.pipeline (testdata/azurepy/parallel.py) against `shoal server
// --tls`: the SDK uploads the task's code, registers the anonymous
// parallel component through the ARM component route and submits the
// pipeline, which reads back with a parallel step (its entry script and
// settings). The run of the step is the driver's and the ledger's.
func TestAzurePythonSDKParallel(t *testing.T) {
	t.Parallel()
	nb := startNotebookEnv(t, fastJobsConfig)
	createCluster(t, nb.s, "par-cluster", "--max-instances", "2")
	text, steps := nb.run(t, "parallel.py", 6*time.Minute, "CLUSTER=par-cluster")
	wantSteps(t, steps, map[string]map[string]any{
		"read_back": {"type": "parallel", "entry_script": "score.py", "mini_batch_size": "2"},
		"canceled":  {},
	})
	if t.Failed() {
		t.Logf("parallel.py's output:\n%s", text)
	}
}
