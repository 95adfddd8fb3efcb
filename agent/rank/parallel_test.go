package rank

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/agent/parallel"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// A rank of a parallel job gets the driver, written where
// SHOAL_PARALLEL_DRIVER says (the job's own value of it loses), and its
// task: the ledger's URL on the agent's server, the token, the input's
// and the append file's paths on this node.
func TestParallelRankGetsTheDriverAndItsTask(t *testing.T) {
	a := newTestAgent(t, Node{Accounts: runas.Unisolated(), NodeID: "n", ServerURL: "http://server.test:8080/"})
	sp := job.ParallelSpec{InputData: "${{inputs.images}}", EntryScript: "score.py", AppendRowTo: "${{outputs.score}}", AppendRowFile: "predictions.csv"}
	task := &node.AgentTask{RankRef: node.RankRef{AttemptID: "att", Rank: 1}, JobName: "j", NodeCount: 2, Outputs: []string{"score"},
		EnvironmentVariables: map[string]string{job.ParallelDriverEnv: "/tmp/evil.py"},
		Parallel:             &node.ParallelTask{Spec: sp, Path: "/api/v1/parallel/att", Token: "shoalpar_x", InputType: "uri_folder"}}
	r := a.newRank(task)
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	r.inputEnv = map[string]string{"images": "/data/images"}
	outDir := filepath.Join(r.dir, "outputs")
	var err error
	if r.parallelEnv, err = r.prepareParallel(outDir); err != nil {
		t.Fatal(err)
	}
	env := r.env(outDir)
	drv := env[job.ParallelDriverEnv]
	if drv != filepath.Join(r.dir, "parallel", "driver.py") {
		t.Fatalf("driver at %q", drv)
	}
	if b, err := os.ReadFile(drv); err != nil || string(b) != string(parallel.Driver()) {
		t.Fatalf("driver file: %v", err)
	}
	var pt parallel.Task
	if err := json.Unmarshal([]byte(env[parallel.TaskEnv]), &pt); err != nil {
		t.Fatal(err)
	}
	want := parallel.Task{URL: "http://server.test:8080/api/v1/parallel/att", Token: "shoalpar_x", Rank: 1, NodeCount: 2, InputType: "uri_folder",
		InputPath: "/data/images", CodeDir: filepath.Join(r.dir, "code"), OutputsDir: outDir, LogsDir: filepath.Join(r.dir, "code", "logs"),
		AppendPath: filepath.Join(outDir, "score", "predictions.csv"), ErrorsPath: filepath.Join(outDir, "score", "errors.txt")}
	if pt.URL != want.URL || pt.Token != want.Token || pt.Rank != 1 || pt.NodeCount != 2 || pt.InputPath != want.InputPath ||
		pt.CodeDir != want.CodeDir || pt.AppendPath != want.AppendPath || pt.ErrorsPath != want.ErrorsPath || pt.LogsDir != want.LogsDir {
		t.Errorf("task:\n%+v\nwant\n%+v", pt, want)
	}
	if d, ok := parallelMount(task, r.dir); !ok || d != filepath.Dir(drv) {
		t.Errorf("a container rank mounts %q (%v), want the driver's folder", d, ok)
	}
	// Any other job gets none of it.
	other := a.newRank(&node.AgentTask{RankRef: node.RankRef{AttemptID: "b"}, JobName: "k"})
	if e, err := other.prepareParallel(outDir); err != nil || e != nil {
		t.Errorf("a command job: %v %v", e, err)
	}
	if _, ok := parallelMount(other.t, other.dir); ok {
		t.Errorf("a command job mounts the driver")
	}
}

// input_data naming no input of the rank fails the job, naming the field
// (prepare's EINVALID: the job's failure, not the node's).
func TestParallelRankWithoutItsInputFails(t *testing.T) {
	a := newTestAgent(t, Node{Accounts: runas.Unisolated(), NodeID: "n", ServerURL: "http://s"})
	task := &node.AgentTask{RankRef: node.RankRef{AttemptID: "att"}, JobName: "j",
		Parallel: &node.ParallelTask{Spec: job.ParallelSpec{InputData: "${{inputs.nope}}", EntryScript: "s.py"}, Path: "/p"}}
	r := a.newRank(task)
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := r.prepareParallel(filepath.Join(r.dir, "outputs"))
	if err == nil || prepareFailureState(err) != node.RankFailed {
		t.Fatalf("err %v", err)
	}
}
