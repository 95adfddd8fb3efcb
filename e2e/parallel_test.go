package e2e_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// parallelProgress is a parallel job's parallel_progress, as job show
// prints it.
type parallelProgress struct {
	MiniBatches int     `json:"mini_batches"`
	Items       int     `json:"items"`
	Done        int     `json:"done"`
	Failed      int     `json:"failed"`
	Retried     int     `json:"retried"`
	InFlight    int     `json:"in_flight"`
	Left        int     `json:"left"`
	FailedItems int     `json:"failed_items"`
	PerMinute   float64 `json:"per_minute"`
	ETA         string  `json:"eta"`
	Aborted     string  `json:"aborted"`
}

// progressOf reads job name's parallel_progress: zero while the job is
// not submitted yet or its nodes have not listed its input.
func progressOf(t *testing.T, s *server, name string) parallelProgress {
	t.Helper()
	var p parallelProgress
	out, _, code := run(t, s.env, "job", "show", "-n", name, "--query", "parallel_progress", "-o", "json")
	if code == 0 && strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("job show -n %s --query parallel_progress: %v\n%s", name, err, out)
		}
	}
	return p
}

// scoreScript is an entry script as Azure's parallel jobs have them: init()
// reads its arguments, run(mini_batch) scores each file (its name and
// length) and leaves a file of its own in the side output folder; with
// --log it appends which rank ran which file to a log outside the job,
// and with --sleep it takes that long per file.
const scoreScript = `import argparse, os, time

def init():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--side")
    p.add_argument("--prefix", default="scored")
    p.add_argument("--log")
    p.add_argument("--sleep", type=float, default=0)
    args, _ = p.parse_known_args()

def run(mini_batch):
    rows = []
    for f in mini_batch:
        name = os.path.basename(f)
        if args.log:
            with open(args.log, "a") as log:
                log.write("%s %s %d\n" % (name, os.environ.get("SHOAL_NODE_RANK"), os.getpid()))
        time.sleep(args.sleep)
        if args.side:
            with open(os.path.join(args.side, name + ".done"), "w") as out:
                out.write(name)
        rows.append("%s %s %d" % (args.prefix, name, len(open(f).read())))
    return rows
`

// parallelWork writes a work folder: data/ with n files, src/score.py
// (script) and pipeline.yml (doc), and returns the folder.
func parallelWork(t *testing.T, n int, script, doc string) string {
	t.Helper()
	dir := reachableDir(t, "shoal-e2e-parallel-")
	for _, d := range []string{"data", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		name := filepath.Join(dir, "data", fmt.Sprintf("f%03d.txt", i))
		if err := os.WriteFile(name, []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "score.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.yml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// filesUnder lists the regular files under dir, relative, sorted.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// downloadOutput downloads output of job name and returns its folder.
func downloadOutput(t *testing.T, s *server, name, output string) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, s.env, "job", "download", "-n", name, "--output-name", output, "-p", dir)
	return dir
}

// readRows reads the one file under dir whose name is file (the
// append_row_to file) as its lines.
func readRows(t *testing.T, dir, file string) []string {
	t.Helper()
	for _, f := range filesUnder(t, dir) {
		if filepath.Base(f) == file {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		}
	}
	t.Fatalf("no %s under the downloaded output: %v", file, filesUnder(t, dir))
	return nil
}

// TestParallelStepScoresAFolder runs Azure's parallel step as written:
// 40 files in mini-batches of 3 on 2 nodes with 2 workers each; the rows
// run returned are the append_row_to file, each file once; what the
// workers wrote in another output folder is in it, whichever node wrote
// it; job show counts the mini-batches.
func TestParallelStepScoresAFolder(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "batch-cluster", "--max-instances", "2")
	work := parallelWork(t, 40, scoreScript, `$schema: https://azuremlschemas.azureedge.net/latest/pipelineJob.schema.json
type: pipeline
display_name: score-files
settings:
  default_compute: azureml:batch-cluster
jobs:
  score:
    type: parallel
    inputs:
      files:
        type: uri_folder
        path: ./data
    outputs:
      scores:
        type: uri_file
        path: azureml://datastores/workspaceblobstore/paths/scores/results.txt
      side:
        type: uri_folder
    input_data: ${{inputs.files}}
    mini_batch_size: "3"
    resources:
      instance_count: 2
    max_concurrency_per_instance: 2
    mini_batch_error_threshold: -1
    error_threshold: -1
    retry_settings:
      max_retries: 1
      timeout: 30
    logging_level: INFO
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --side ${{outputs.side}} --prefix scored
      append_row_to: ${{outputs.scores}}
`)
	p := submitJob(t, s, filepath.Join(work, "pipeline.yml"))
	waitJob(t, s, p, 3*time.Minute, "Completed", "Failed")
	step := p + "-score"
	if j := getJob(t, s, step); j.Status != "Completed" {
		t.Fatalf("%s\n%s", j, jobLog(t, s, step))
	}
	pr := progressOf(t, s, step)
	if pr.MiniBatches != 14 || pr.Items != 40 || pr.Done != 14 || pr.Left != 0 || pr.Failed != 0 || pr.InFlight != 0 {
		t.Errorf("parallel_progress %+v; want 14 mini-batches of 40 items, all done", pr)
	}
	rows := readRows(t, downloadOutput(t, s, step, "scores"), "results.txt")
	var want, got []string
	for i := range 40 {
		want = append(want, fmt.Sprintf("scored f%03d.txt %d", i, i+1))
	}
	got = append(got, rows...)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("the rows:\n%s\nwant each file scored once:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	side := filesUnder(t, downloadOutput(t, s, step, "side"))
	if len(side) != 40 {
		t.Errorf("the side output holds %d files, want the 40 the workers wrote on both nodes: %v", len(side), side)
	}
	if a := listAttempts(t, s, step); len(a) != 1 || len(a[0].Ranks) != 2 {
		t.Errorf("attempts %+v; want one attempt of 2 ranks", a)
	}
}

// TestParallelPreemptedNodeCostsOnlyItsMiniBatchesInFlight preempts the
// node of rank 1 of a 3-node parallel step on a low-priority cluster
// while it scores: the other nodes take the mini-batch it held and go on
// (no new attempt), and every file is scored once but the one in flight
// on the preempted node, which is scored again elsewhere.
func TestParallelPreemptedNodeCostsOnlyItsMiniBatchesInFlight(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "lowpri", "--tier", "low_priority", "--max-instances", "3", "--idle-time-before-scale-down", "60")
	runLog := filepath.Join(sharedDir(t), "runs.log")
	work := parallelWork(t, 30, scoreScript, loggedPipeline("lowpri", 3, runLog, "0.7"))
	p := submitJob(t, s, filepath.Join(work, "pipeline.yml"))
	step := p + "-score"
	waitScored(t, s, step, 10)
	a := currentAttempt(t, s, step)
	if len(a.Ranks) != 3 {
		t.Fatalf("attempt %+v; want 3 ranks", a)
	}
	victim := a.Ranks[1].NodeID
	mustRun(t, s.env, "compute", "preempt-node", "-n", "lowpri", "--node", victim, "-o", "none")
	j := waitJob(t, s, step, 3*time.Minute, "Completed", "Failed")
	if j.Status != "Completed" || j.AttemptCount != 1 {
		t.Fatalf("%s; want Completed in its one attempt\n%s", j, jobLog(t, s, step))
	}
	rows := readRows(t, downloadOutput(t, s, step, "scores"), "scores")
	if len(rows) != 30 {
		t.Errorf("%d rows, want 30: %v", len(rows), rows)
	}
	runs := scoredRuns(t, runLog)
	if len(runs) != 30 {
		t.Errorf("%d files were run, want 30", len(runs))
	}
	again := 0
	for name, ranks := range runs {
		if len(ranks) > 1 {
			again++
			if ranks[0] != "1" || len(ranks) > 2 {
				t.Errorf("%s ran on ranks %v: only a mini-batch in flight on the preempted rank 1 may run twice", name, ranks)
			}
		}
	}
	if again > 1 {
		t.Errorf("%d files ran twice; the preempted node held one mini-batch (concurrency 1)", again)
	}
	if pr := progressOf(t, s, step); pr.Done != 30 || pr.Failed != 0 {
		t.Errorf("parallel_progress %+v; want 30 done", pr)
	}
}

// TestParallelBadEntryScripts: an entry script without run() fails the
// step at once saying so; one whose run raises on every file fails it
// once the error threshold is passed, naming the files.
func TestParallelBadEntryScripts(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "bad-cluster", "--max-instances", "1")
	doc := func(extra string) string {
		return `type: pipeline
settings:
  default_compute: azureml:bad-cluster
jobs:
  score:
    type: parallel
    inputs:
      files: {type: uri_folder, path: ./data}
    outputs:
      scores: {type: uri_file}
    input_data: ${{inputs.files}}
    mini_batch_size: "2"
` + extra + `    task:
      type: run_function
      code: ./src
      entry_script: score.py
      append_row_to: ${{outputs.scores}}
`
	}
	for _, c := range []struct {
		name, script, extra string
		want                []string
	}{
		{"no-run", "def init():\n    pass\n", "", []string{"score.py", "run"}},
		{"raises", "def init():\n    pass\n\ndef run(mini_batch):\n    raise ValueError('cannot score ' + ', '.join(mini_batch))\n",
			"    error_threshold: 3\n    retry_settings: {max_retries: 0, timeout: 30}\n", []string{"error_threshold", "f00", "cannot score"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := parallelWork(t, 6, c.script, doc(c.extra))
			p := submitJob(t, s, filepath.Join(work, "pipeline.yml"))
			waitJob(t, s, p, 2*time.Minute, "Failed")
			j := getJob(t, s, p+"-score")
			text := j.Error + "\n" + jobLog(t, s, p+"-score")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("the step's error and log do not say %q:\n%s", w, text)
				}
			}
		})
	}
}

// TestAzureParallelIrisExample runs Azure's parallel example
// 2a_iris_batch_prediction (testdata/azureml-examples: its pipeline,
// MLTable, data and entry script as written but for what its README
// lists): an mltable input in mode direct split into mini-batches of
// 10 kb, scored on 2 nodes with 2 workers each by a model read in init(),
// the DataFrames run returns appended to a uri_file output on the
// default datastore.
func TestAzureParallelIrisExample(t *testing.T) {
	t.Parallel()
	testenv.Require(t, "the example scores with pandas and scikit-learn", func() error {
		return exec.Command("/usr/bin/python3", "-c", "import pandas, sklearn").Run()
	}, "apt-get install python3-pandas python3-sklearn (scripts/test installs them)")
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "cpu-cluster", "--max-instances", "2")
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(reachableDir(t, "shoal-e2e-iris-"), "2a")
	if err := exec.Command("cp", "-r", filepath.Join(root, "e2e/testdata/azureml-examples/2a_iris_batch_prediction"), work).Run(); err != nil {
		t.Fatal(err)
	}
	// The model init() loads: trained here on the example's rows (its
	// first row is the header MLTable's all_files_same_headers reads).
	train := `import os, pickle, sys
import numpy as np
from sklearn.tree import DecisionTreeClassifier
x = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
y = (x[:, 2] > 2.5).astype(int) + (x[:, 2] > 4.9).astype(int)
os.makedirs(sys.argv[2], exist_ok=True)
with open(os.path.join(sys.argv[2], "model.pkl"), "wb") as f:
    pickle.dump(DecisionTreeClassifier(random_state=0).fit(x, y), f)
`
	if out, err := exec.Command("/usr/bin/python3", "-c", train, filepath.Join(work, "neural-iris-mltable", "iris.csv"), filepath.Join(work, "iris-model")).CombinedOutput(); err != nil {
		t.Fatalf("training the model: %v\n%s", err, out)
	}
	p := submitJob(t, s, filepath.Join(work, "pipeline.yml"))
	waitJob(t, s, p, 4*time.Minute, "Completed", "Failed")
	step := p + "-batch_prediction"
	if j := getJob(t, s, step); j.Status != "Completed" {
		t.Fatalf("%s\n%s", j, jobLog(t, s, step))
	}
	rows := readRows(t, downloadOutput(t, s, step, "job_output_file"), "aggregated_returns.csv")
	if len(rows) != 74 {
		t.Errorf("%d rows, want the example's 74 (75 lines, the first its header)", len(rows))
	}
	for _, r := range rows {
		if f := strings.Fields(r); len(f) != 5 || !slices.Contains([]string{"0", "1", "2"}, f[4]) {
			t.Errorf("row %q: want the 4 measurements and the predicted variety", r)
			break
		}
	}
	if pr := progressOf(t, s, step); pr.MiniBatches < 2 || pr.Done != pr.MiniBatches || pr.Items != 74 {
		t.Errorf("parallel_progress %+v; want several 10 kb mini-batches of the 74 rows, all done", pr)
	}
}

// TestParallelServerKill9RunsNoMiniBatchTwice kills the server with
// SIGKILL while a parallel step scores and starts it again: the nodes'
// drivers wait for it, the ledger it reads back from the store holds
// what finished, and every file is scored exactly once.
func TestParallelServerKill9RunsNoMiniBatchTwice(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: fastJobsConfig})
	createCluster(t, s, "crash-cluster", "--max-instances", "2", "--idle-time-before-scale-down", "120")
	runLog := filepath.Join(sharedDir(t), "runs.log")
	work := parallelWork(t, 24, scoreScript, loggedPipeline("crash-cluster", 2, runLog, "0.5"))
	p := submitJob(t, s, filepath.Join(work, "pipeline.yml"))
	step := p + "-score"
	waitScored(t, s, step, 6)
	s.kill9()
	time.Sleep(2 * time.Second) // the nodes go on scoring, and wait to report
	s.restart()
	j := waitJob(t, s, step, 3*time.Minute, "Completed", "Failed")
	if j.Status != "Completed" {
		t.Fatalf("%s\n%s", j, jobLog(t, s, step))
	}
	if rows := readRows(t, downloadOutput(t, s, step, "scores"), "scores"); len(rows) != 24 {
		t.Errorf("%d rows, want 24: %v", len(rows), rows)
	}
	runs := scoredRuns(t, runLog)
	for name, ranks := range runs {
		if len(ranks) != 1 {
			t.Errorf("%s was scored %d times (ranks %v), want once", name, len(ranks), ranks)
		}
	}
	if len(runs) != 24 {
		t.Errorf("%d files were scored, want 24", len(runs))
	}
}

// loggedPipeline is a pipeline of one parallel step on cluster's nodes
// nodes, a file to a mini-batch and one worker each, whose entry script
// logs each file it scores to runLog and takes sleep seconds per file.
func loggedPipeline(cluster string, nodes int, runLog, sleep string) string {
	return fmt.Sprintf(`type: pipeline
settings:
  default_compute: azureml:%s
jobs:
  score:
    type: parallel
    inputs:
      files: {type: uri_folder, path: ./data}
    outputs:
      scores: {type: uri_file}
    input_data: ${{inputs.files}}
    mini_batch_size: "1"
    resources: {instance_count: %d}
    max_concurrency_per_instance: 1
    task:
      type: run_function
      code: ./src
      entry_script: score.py
      program_arguments: --log %s --sleep %s
      append_row_to: ${{outputs.scores}}
`, cluster, nodes, runLog, sleep)
}

// waitScored waits until step has finished n mini-batches.
func waitScored(t *testing.T, s *server, step string, n int) {
	t.Helper()
	waitFor(t, 2*time.Minute, fmt.Sprintf("%d files to be scored", n), func() (bool, string) {
		pr := progressOf(t, s, step)
		return pr.Done >= n, fmt.Sprintf("%+v", pr)
	})
}

// scoredRuns reads what loggedPipeline's script logged: the ranks that
// scored each file, in order.
func scoredRuns(t *testing.T, runLog string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(runLog)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			runs[f[0]] = append(runs[f[0]], f[1])
		}
	}
	return runs
}
