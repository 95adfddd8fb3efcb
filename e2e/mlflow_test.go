package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// TestJobLogsMetricsThroughMLflow: a job on a local cluster logs a
// parameter, a tag and metrics with requests shaped as MLflow's client
// makes them (testdata/mlflow/log.py, with Python's standard library: no
// MLflow client is installable here) to the MLFLOW_TRACKING_URI and
// token the server gave it; `shoal job show --metrics` then shows them,
// as a table and, with -o json, with every point, the parameter and tag.
func TestJobLogsMetricsThroughMLflow(t *testing.T) {
	t.Parallel()
	py := testenv.Python3(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "mlflow-cluster"
	createCluster(t, s, cluster, "--max-instances", "1", "--idle-time-before-scale-down", "60")
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "mlflow", "log.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "log.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "job.yml")
	job := "type: command\nexperiment_name: mnist\ncode: ./src\ncommand: " + py + " log.py\n"
	if err := os.WriteFile(file, []byte(job), 0o600); err != nil {
		t.Fatal(err)
	}
	name := submitJob(t, s, file, "--compute", cluster)
	waitFor(t, 90*time.Second, "the job to end", func() (bool, string) {
		j := getJob(t, s, name)
		return j.Status == "Completed" || j.Status == "Failed", j.String()
	})
	if j := getJob(t, s, name); j.Status != "Completed" {
		t.Fatalf("the job ended %s; its log:\n%s", j.Status, jobLog(t, s, name))
	}
	if log := jobLog(t, s, name); !strings.Contains(log, "logged 3 losses to "+name+" in mnist") {
		t.Errorf("the job's log: %q", log)
	}

	table := mustRun(t, s.env, "job", "show", "-n", name, "--metrics", "-o", "tsv")
	for _, want := range []string{"accuracy\t0.9\t2\t0.9\t0.9\t1", "f1\t0.8\t2\t0.8\t0.8\t1", "loss\t0.25\t2\t0.25\t0.9\t3"} {
		if !strings.Contains(table, want) {
			t.Errorf("job show --metrics -o tsv has no line %q:\n%s", want, table)
		}
	}
	type point struct {
		Value float64 `json:"value"`
		Step  int64   `json:"step"`
	}
	type kv struct{ Key, Value string }
	m := runJSON[struct {
		History map[string][]point `json:"history"`
		Params  []kv               `json:"params"`
		Tags    []kv               `json:"tags"`
	}](t, s.env, "job", "show", "-n", name, "--metrics", "-o", "json")
	if h := m.History["loss"]; len(h) != 3 || h[0] != (point{0.9, 0}) || h[2] != (point{0.25, 2}) {
		t.Errorf("the loss history: %+v", h)
	}
	if len(m.Params) != 1 || m.Params[0] != (kv{"lr", "0.01"}) {
		t.Errorf("params: %+v (the second value must not have replaced the first)", m.Params)
	}
	tags := map[string]string{}
	for _, tg := range m.Tags {
		tags[tg.Key] = tg.Value
	}
	if tags["stage"] != "train" || tags["mlflow.runName"] != "mnist-lr" {
		t.Errorf("tags: %+v", m.Tags)
	}
}
