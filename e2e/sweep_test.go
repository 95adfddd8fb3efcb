package e2e_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// sweepView is what `shoal job show -o json` prints of a sweep job, the
// fields these tests read.
type sweepView struct {
	Name           string      `json:"name"`
	Status         string      `json:"status"`
	StatusReason   string      `json:"status_reason"`
	Error          string      `json:"error"`
	BestChildRunID string      `json:"best_child_run_id"`
	Trials         []trialView `json:"trials"`
}

// trialView is one of a sweep's trials as its parent records it.
type trialView struct {
	Index           int            `json:"index"`
	Job             string         `json:"job"`
	Parameters      map[string]any `json:"parameters"`
	Status          string         `json:"status"`
	Metric          *float64       `json:"metric"`
	Intervals       int            `json:"intervals"`
	EarlyTerminated string         `json:"early_terminated"`
	Reason          string         `json:"reason"`
}

// expectedAccuracy is the final accuracy testdata/sweep/src/train.py
// logs for a learning rate (the same formula): 0.90 to 0.95 within a
// decade of 0.01, falling fast outside.
func expectedAccuracy(lr float64) float64 {
	d := math.Abs(math.Log10(lr) + 2)
	return 0.95 - 0.05*d - 0.3*math.Max(0, d-1)
}

// goodTrial says whether a trial's accuracy is within bandit's slack
// (slack_factor 0.1: 0.95/1.1 < 0.87) of any trial's, so that early
// termination must never cancel it.
func goodTrial(tr trialView) bool {
	lr, _ := tr.Parameters["lr"].(float64)
	return lr > 0 && expectedAccuracy(lr) >= 0.90
}

// writeSweep writes the sweep YAML with the trial's code folder (train.py)
// beside it and returns the YAML's path.
func writeSweep(t *testing.T, yaml string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "sweep", "src", "train.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "train.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "sweep.yml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// sweepYAML is a sweep in Azure ML's CLI v2 shape on cluster: random
// sampling with a seed, bandit early termination, the given limits; the
// trial sleeps pause seconds between its six epochs.
func sweepYAML(cluster string, total, concurrent int, pause string) string {
	return fmt.Sprintf(`$schema: https://azuremlschemas.azureedge.net/latest/sweepJob.schema.json
type: sweep
experiment_name: lr-sweep
compute: azureml:%s
trial:
  code: ./src
  command: >-
    python3 train.py --lr ${{search_space.lr}} --batch ${{search_space.batch}}
    --momentum ${{search_space.momentum}} --pause %s
search_space:
  lr: {type: loguniform, min_value: -9.21, max_value: -0.7}
  batch: {type: choice, values: [16, 32, 64]}
  momentum: {type: uniform, min_value: 0.8, max_value: 0.99}
sampling_algorithm: {type: random, seed: 7}
objective: {primary_metric: accuracy, goal: maximize}
limits: {max_total_trials: %d, max_concurrent_trials: %d, timeout: 600, trial_timeout: 120}
early_termination: {type: bandit, slack_factor: 0.1, evaluation_interval: 1, delay_evaluation: 2}
`, cluster, pause, total, concurrent)
}

func getSweep(t *testing.T, s *server, name string) sweepView {
	t.Helper()
	return runJSON[sweepView](t, s.env, "job", "show", "-n", name, "-o", "json")
}

// clusterJobs lists the jobs on a compute: a sweep's trials (the sweep
// itself holds no compute).
func clusterJobs(t *testing.T, s *server, cluster string) []jobView {
	t.Helper()
	return runJSON[[]jobView](t, s.env, "job", "list", "--compute", cluster, "--max-results", "1000", "-o", "json")
}

func describeTrials(trials []trialView) string {
	var b strings.Builder
	for _, tr := range trials {
		m := "-"
		if tr.Metric != nil {
			m = fmt.Sprintf("%.4f", *tr.Metric)
		}
		fmt.Fprintf(&b, "\n  %d %s %s metric %s (%d intervals) %v %s %s", tr.Index, tr.Job, tr.Status, m, tr.Intervals, tr.Parameters, tr.EarlyTerminated, tr.Reason)
	}
	return b.String()
}

// TestSweepRandomBanditPreemption runs Azure ML's sweep shape end to end
// on a low-priority local cluster of at most 3 nodes: 12 trials of
// train.py (which logs accuracy per epoch through MLflow's REST API, with
// Python's standard library: no MLflow client is installable here), random
// sampling with a seed, 3 at a time, bandit early termination. One node
// running a good trial is preempted: the trial is requeued (an infra
// requeue, as any command job on low-priority nodes) and completes. The
// sweep completes with exactly 12 trials, never more than 3 at once, the
// bad trials cancelled by bandit, and the best trial the completed one
// with the highest accuracy; `job show -o table` lists the trials and
// `job show --metrics` the best trial's accuracy.
func TestSweepRandomBanditPreemption(t *testing.T) {
	t.Parallel()
	testenv.Python3(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "sweep-lowpri"
	createCluster(t, s, cluster, "--tier", "low_priority", "--size", "Standard_DS1_v2", "--max-instances", "3", "--idle-time-before-scale-down", "60")
	name := submitJob(t, s, writeSweep(t, sweepYAML(cluster, 12, 3, "0.6")))

	var (
		sw        sweepView
		maxActive int
		preempted string // the trial whose node was preempted
		samples   int
	)
	deadline := time.Now().Add(150 * time.Second)
	for {
		// The children as the scheduler sees them: never more than
		// max_concurrent_trials of them queued or running.
		active := 0
		var running []string
		for _, j := range clusterJobs(t, s, cluster) {
			if j.Status != "Completed" && j.Status != "Failed" && j.Status != "Canceled" {
				active++
				running = append(running, j.Name+" "+j.Status)
			}
		}
		samples++
		if active > 3 {
			t.Errorf("%d trials queued or running at once, max_concurrent_trials is 3: %v", active, running)
		}
		maxActive = max(maxActive, active)

		sw = getSweep(t, s, name)
		if sw.Status == "Completed" || sw.Status == "Failed" || sw.Status == "Canceled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep has not ended after 150 s: %s (%s)%s", sw.Status, sw.StatusReason, describeTrials(sw.Trials))
		}
		// Preempt the node of a good trial that is part-way through its
		// epochs: it must be requeued, restart, and complete.
		if preempted == "" {
			for _, tr := range sw.Trials {
				if tr.Status != "Running" || !goodTrial(tr) || tr.Intervals < 2 || tr.Intervals > 3 {
					continue
				}
				list := listAttempts(t, s, tr.Job)
				if len(list) != 1 || list[0].Status != "Running" || len(list[0].Ranks) == 0 || list[0].Ranks[0].NodeID == "" {
					continue
				}
				node := list[0].Ranks[0].NodeID
				out := mustRun(t, s.env, "compute", "preempt-node", "-n", cluster, "--node", node, "-o", "json")
				if n := decodeJSON[nodeView](t, out); n.State != "preempted" {
					t.Errorf("preempt-node printed node_state %q, want preempted", n.State)
				}
				preempted = tr.Job
				t.Logf("preempted node %s running %s (%d intervals logged, lr %v)", node, tr.Job, tr.Intervals, tr.Parameters["lr"])
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("sweep %s ended %s (%s) after %d samples:%s", name, sw.Status, sw.StatusReason, samples, describeTrials(sw.Trials))

	if sw.Status != "Completed" {
		t.Fatalf("the sweep ended %s (%s), want Completed", sw.Status, sw.Error)
	}
	if len(sw.Trials) != 12 {
		t.Errorf("%d trials, want exactly 12 (max_total_trials)", len(sw.Trials))
	}
	children := clusterJobs(t, s, cluster)
	if len(children) != 12 {
		t.Errorf("%d jobs on the cluster, want the 12 trials", len(children))
	}
	if maxActive != 3 {
		t.Errorf("at most %d trials were queued or running at once; want 3 (max_concurrent_trials) reached and never passed", maxActive)
	}

	// The preempted trial was requeued without spending a retry and
	// completed on another node.
	if preempted == "" {
		t.Errorf("no good trial was seen running part-way through its epochs, so no node was preempted")
	} else {
		j := getJob(t, s, preempted)
		if j.Status != "Completed" || j.InfraRequeues != 1 || j.FailedAttempts != 0 {
			t.Errorf("the preempted trial: %s; want Completed after 1 infra requeue", j)
		}
		attempts := listAttempts(t, s, preempted)
		if len(attempts) != 2 || attempts[0].Status != "Preempted" || attempts[1].Status != "Completed" {
			t.Errorf("the preempted trial's attempts:%s; want Preempted, Completed", describeAttempts(attempts))
		}
	}

	// Bandit cancelled the bad trials, and only those.
	cancelled := 0
	for _, tr := range sw.Trials {
		if tr.EarlyTerminated == "" {
			if tr.Status != "Completed" {
				t.Errorf("trial %s ended %s without early termination (%s)", tr.Job, tr.Status, tr.Reason)
			}
			continue
		}
		cancelled++
		if tr.EarlyTerminated != "BanditSlack" || !strings.HasPrefix(tr.Reason, "bandit: ") {
			t.Errorf("trial %s early-terminated %q (%s), want BanditSlack", tr.Job, tr.EarlyTerminated, tr.Reason)
		}
		if tr.Status != "Canceled" {
			t.Errorf("early-terminated trial %s is %s, want Canceled", tr.Job, tr.Status)
		}
		if j := getJob(t, s, tr.Job); j.Status != "Canceled" {
			t.Errorf("early-terminated trial's job: %s", j)
		}
		if goodTrial(tr) {
			t.Errorf("bandit cancelled trial %s, whose accuracy %.4f is within its slack of any trial's (%s)", tr.Job, expectedAccuracy(tr.Parameters["lr"].(float64)), tr.Reason)
		}
	}
	if cancelled == 0 {
		t.Errorf("no trial was cancelled by bandit early termination")
	}

	// The best trial: the completed one with the highest accuracy (ties to
	// the first started), which logged what train.py computes.
	best := -1
	for i, tr := range sw.Trials {
		if tr.Status != "Completed" || tr.Metric == nil {
			continue
		}
		if lr := tr.Parameters["lr"].(float64); math.Abs(*tr.Metric-expectedAccuracy(lr)) > 1e-9 {
			t.Errorf("trial %s: metric %v, want train.py's final accuracy %v for lr %v", tr.Job, *tr.Metric, expectedAccuracy(lr), lr)
		}
		if tr.Intervals != 6 {
			t.Errorf("completed trial %s has %d intervals, want its 6 epochs", tr.Job, tr.Intervals)
		}
		if best < 0 || *tr.Metric > *sw.Trials[best].Metric {
			best = i
		}
	}
	if best < 0 {
		t.Fatalf("no completed trial with a metric")
	}
	bestTrial := sw.Trials[best]
	if sw.BestChildRunID != bestTrial.Job {
		t.Errorf("best_child_run_id %q, want %s (accuracy %v)", sw.BestChildRunID, bestTrial.Job, *bestTrial.Metric)
	}
	if !strings.Contains(sw.StatusReason, "best trial "+bestTrial.Job) {
		t.Errorf("the sweep's status reason %q does not name the best trial", sw.StatusReason)
	}

	// job show -o table: the sweep's row, then a row per trial.
	table := mustRun(t, s.env, "job", "show", "-n", name, "-o", "table")
	if !strings.Contains(table, "Early Terminated") || !strings.Contains(table, "Parameters") {
		t.Errorf("job show -o table has no trials table:\n%s", table)
	}
	lines := strings.Split(table, "\n")
	for _, tr := range sw.Trials {
		i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, " "+tr.Job+" ") })
		if i < 0 {
			t.Errorf("job show -o table has no row for trial %s:\n%s", tr.Job, table)
			continue
		}
		row := lines[i]
		if !strings.Contains(row, tr.Status) || !strings.Contains(row, fmt.Sprintf("lr=%s", shortFloat(tr.Parameters["lr"].(float64)))) {
			t.Errorf("trial %s's row lacks its status or lr: %q", tr.Job, row)
		}
		if tr.EarlyTerminated != "" && !strings.Contains(row, tr.EarlyTerminated) {
			t.Errorf("trial %s's row lacks %s: %q", tr.Job, tr.EarlyTerminated, row)
		}
		if strings.HasSuffix(strings.TrimSpace(row), "best") != (tr.Job == bestTrial.Job) {
			t.Errorf("trial %s's row marks best wrongly: %q", tr.Job, row)
		}
	}

	// job show --metrics on the best trial: six epochs of accuracy, the
	// last at step 6.
	metrics := mustRun(t, s.env, "job", "show", "-n", bestTrial.Job, "--metrics", "-o", "tsv")
	if want := fmt.Sprintf("accuracy\t%s\t6\t", shortFloat(*bestTrial.Metric)); !strings.Contains(metrics, want) || !strings.HasSuffix(strings.TrimSpace(metrics), "\t6") {
		t.Errorf("job show --metrics of the best trial has no line %q ending in 6 points:\n%s", want, metrics)
	}
}

// shortFloat writes a float as the CLI does (the shortest form that reads
// back the same).
func shortFloat(v float64) string { return fmt.Sprint(v) }

// TestSweepMalformedRefused: malformed sweep YAMLs are refused by `shoal
// job create` with an error naming the path of what is wrong.
func TestSweepMalformedRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "sweep-bad"
	createCluster(t, s, cluster, "--max-instances", "1")
	good := sweepYAML(cluster, 4, 2, "0.1")
	cases := []struct{ name, from, to, path string }{
		{"loguniform bounds reversed", "min_value: -9.21, max_value: -0.7", "min_value: -0.7, max_value: -9.21", "search_space.lr.min_value"},
		{"unknown goal", "goal: maximize", "goal: maximise", "objective.goal"},
		{"unknown hyperparameter in the command", "--pause %s", "--pause %s --x ${{search_space.x}}", "trial.command"},
		{"grid with uniform", "{type: random, seed: 7}", "grid", "search_space.lr.type"},
		{"q on uniform", "{type: uniform, min_value: 0.8, max_value: 0.99}", "{type: uniform, min_value: 0.8, max_value: 0.99, q: 0.01}", "search_space.momentum.q"},
		{"bandit without slack", "slack_factor: 0.1, ", "", "early_termination.slack_factor"},
		{"concurrency 0", "max_concurrent_trials: 2", "max_concurrent_trials: 0", "limits.max_concurrent_trials"},
	}
	for _, c := range cases {
		from, to := c.from, c.to
		if strings.Contains(from, "%s") {
			from, to = strings.ReplaceAll(from, "%s", "0.1"), strings.ReplaceAll(to, "%s", "0.1")
		}
		if !strings.Contains(good, from) {
			t.Fatalf("%s: the sweep YAML has no %q", c.name, from)
		}
		stderr, _ := mustFail(t, s.env, "job", "create", "-f", writeSweep(t, strings.Replace(good, from, to, 1)))
		if !strings.Contains(stderr, c.path) {
			t.Errorf("%s: the error does not name %s: %s", c.name, c.path, stderr)
		}
	}
	if jobs := runJSON[[]jobView](t, s.env, "job", "list", "-o", "json"); len(jobs) != 0 {
		t.Errorf("refused sweeps left %d jobs", len(jobs))
	}
}

// TestSweepCancelCascade: a sweep cancelled while two trials run ends
// Canceled, its running trials Canceled, and no trial starts after.
func TestSweepCancelCascade(t *testing.T) {
	t.Parallel()
	testenv.Python3(t)
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	const cluster = "sweep-cancel"
	createCluster(t, s, cluster, "--size", "Standard_DS1_v2", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	// Long epochs: the trials are still running when the sweep is cancelled.
	name := submitJob(t, s, writeSweep(t, sweepYAML(cluster, 6, 2, "5")))
	waitFor(t, 60*time.Second, "two trials running", func() (bool, string) {
		running := 0
		for _, j := range clusterJobs(t, s, cluster) {
			if j.Status == "Running" {
				running++
			}
		}
		sw := getSweep(t, s, name)
		return running == 2, fmt.Sprintf("%d running; sweep %s%s", running, sw.Status, describeTrials(sw.Trials))
	})
	mustRun(t, s.env, "job", "cancel", "-n", name, "-o", "none")
	var sw sweepView
	waitFor(t, 45*time.Second, "the sweep to end", func() (bool, string) {
		sw = getSweep(t, s, name)
		return sw.Status == "Canceled" || sw.Status == "Completed" || sw.Status == "Failed", sw.Status + describeTrials(sw.Trials)
	})
	if sw.Status != "Canceled" {
		t.Fatalf("the cancelled sweep ended %s (%s), want Canceled", sw.Status, sw.StatusReason)
	}
	if len(sw.Trials) != 2 {
		t.Errorf("%d trials recorded, want the 2 that ran when it was cancelled:%s", len(sw.Trials), describeTrials(sw.Trials))
	}
	for _, tr := range sw.Trials {
		if tr.Status != "Canceled" {
			t.Errorf("trial %s is %s, want Canceled", tr.Job, tr.Status)
		}
	}
	children := clusterJobs(t, s, cluster)
	if len(children) != 2 {
		t.Errorf("%d jobs on the cluster, want the 2 trials", len(children))
	}
	for _, j := range children {
		if j.Status != "Canceled" {
			t.Errorf("trial job: %s; want Canceled", j)
		}
	}
	if sw.BestChildRunID != "" {
		t.Errorf("a cancelled sweep with no completed trial names best trial %q", sw.BestChildRunID)
	}
}
