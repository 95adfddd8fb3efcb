package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/service/parallel"
)

// startParallel submits a parallel job on 2 nodes with spec and starts
// both ranks: their tasks and nodes by rank.
func startParallel(t *testing.T, config string, ps *job.ParallelSpec) (*harness, map[int]*node.AgentTask, map[int]string) {
	t.Helper()
	h := newHarness(t, config)
	h.compute("cpu", 0, 2, 60)
	ps.ProgramArguments = "--x 1"
	// The code folder that holds the entry script: a parallel job has one.
	code, err := h.files.PutArtifact(ws, strings.NewReader(""), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	js := &job.JobSpec{Name: "pj", Command: job.ParallelCommand("--x 1"), Compute: "cpu", Code: code,
		Resources: &job.JobResources{InstanceCount: 2},
		Inputs:    map[string]*job.JobInput{"data": {Type: "uri_folder", Path: "https://example.com/data/"}},
		Parallel:  ps}
	if _, _, err := h.svc.SubmitJob(h.ctx, ws, js); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	h.step(time.Second)
	ids := h.joinAll()
	if len(ids) != 2 {
		t.Fatalf("joined %v, want 2 nodes", ids)
	}
	h.step(0)
	tasks := map[int]*node.AgentTask{}
	nodes := map[int]string{}
	for _, n := range ids {
		for _, task := range h.syncStart(n) {
			h.report(n, task, node.RankRunning, nil)
			tasks[task.Rank], nodes[task.Rank] = task, n
		}
	}
	if len(tasks) != 2 {
		j, _ := h.svc.FindJob(h.ctx, ws, "pj")
		t.Fatalf("tasks: %v; job %s %s %s", tasks, j.Status, j.StatusReason, j.Error)
	}
	return h, tasks, nodes
}

// A parallel job's ranks get the ledger's path, the attempt's token and
// the input's type; rank 1 preempted gives its leased mini-batches back
// at once (no try spent) while the attempt runs on with rank 0, whose
// completion completes the job; job show then has the progress.
func TestParallelJobRankPreempted(t *testing.T) {
	h, tasks, nodes := startParallel(t, "", &job.ParallelSpec{InputData: "${{inputs.data}}", EntryScript: "score.py", MiniBatchSize: "1"})
	t0, t1 := tasks[0], tasks[1]
	if t1 == nil || t1.Parallel == nil || t1.Parallel.Path != pproto.PathPrefix+t1.AttemptID || t1.Parallel.InputType != "uri_folder" ||
		t1.Parallel.Spec.EntryScript != "score.py" || !strings.HasPrefix(t1.Parallel.Token, "shoalpar_") {
		t.Fatalf("rank 1's parallel task: %+v", t1)
	}

	led := parallel.New(parallel.Config{Store: h.store, Files: h.files, Key: h.secretsKey})
	c, err := led.Authenticate(h.ctx, t1.AttemptID, t1.Parallel.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := led.Plan(h.ctx, c, pproto.PlanRequest{Kind: pproto.KindFiles, Items: 3, MiniBatches: 3, Fingerprint: "f"}); err != nil {
		t.Fatal(err)
	}
	if r, err := led.Lease(h.ctx, c, pproto.LeaseRequest{Rank: 1, Max: 2}); err != nil || len(r.Leases) != 2 {
		t.Fatalf("rank 1's lease: %+v %v", r, err)
	}
	h.finish(nodes[1], t1, node.RankPreempted)
	got, err := h.svc.FindJob(h.ctx, ws, "pj")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.JobRunning {
		t.Fatalf("after rank 1 was preempted the job is %s (%s), want Running", got.Status, got.StatusReason)
	}
	if p := got.ParallelProgress; p == nil || p.InFlight != 0 || p.Left != 3 || p.Retried != 0 {
		t.Fatalf("progress after rank 1 was preempted: %+v", p)
	}
	// Rank 1's process may still run (its node was only cut off): the
	// ledger no longer takes it.
	c, err = led.Authenticate(h.ctx, t1.AttemptID, t1.Parallel.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := led.Lease(h.ctx, c, pproto.LeaseRequest{Rank: 1, Max: 1}); core.ErrorCode(err) != core.ECONFLICT || !strings.Contains(err.Error(), "rank 1 of job pj has ended") {
		t.Fatalf("a lease for the preempted rank: %v", err)
	}
	r, err := led.Lease(h.ctx, c, pproto.LeaseRequest{Rank: 0, Max: 3})
	if err != nil || len(r.Leases) != 3 || r.Leases[0] != (pproto.Lease{Index: 0, Try: 2}) {
		t.Fatalf("rank 0's lease after rank 1's release: %+v %v", r, err)
	}
	h.finish(nodes[0], t0, node.RankCompleted)
	if got, _ := h.svc.FindJob(h.ctx, ws, "pj"); got.Status != job.JobCompleted {
		t.Fatalf("after rank 0 completed: %s (%s)", got.Status, got.StatusReason)
	}
}

// A job whose ledger aborted (error_threshold passed) fails with the
// ledger's words, naming the failed item, not with rank 0's exit code.
func TestParallelJobAbortNamesItems(t *testing.T) {
	zero := 0
	h, tasks, nodes := startParallel(t, "", &job.ParallelSpec{InputData: "${{inputs.data}}", EntryScript: "score.py", ErrorThreshold: &zero,
		Retry: &job.ParallelRetry{MaxRetries: &zero}})
	led := parallel.New(parallel.Config{Store: h.store, Files: h.files, Key: h.secretsKey})
	c, err := led.Authenticate(h.ctx, tasks[0].AttemptID, tasks[0].Parallel.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := led.Plan(h.ctx, c, pproto.PlanRequest{Kind: pproto.KindFiles, Items: 2, MiniBatches: 2, Fingerprint: "f"}); err != nil {
		t.Fatal(err)
	}
	if _, err := led.Lease(h.ctx, c, pproto.LeaseRequest{Rank: 0, Max: 1}); err != nil {
		t.Fatal(err)
	}
	r, err := led.Complete(h.ctx, c, pproto.CompleteRequest{Index: 0, Try: 1, Outcome: pproto.OutcomeFailed, Items: 1,
		FailedItems: []pproto.FailedItem{{Item: "/in/bad.txt", Error: "ValueError: bad pixel"}}})
	if err != nil || r.Abort == "" {
		t.Fatalf("complete: %+v %v", r, err)
	}
	h.finish(nodes[1], tasks[1], node.RankFailed)
	h.finish(nodes[0], tasks[0], node.RankFailed)
	got, err := h.svc.FindJob(h.ctx, ws, "pj")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.JobFailed || !strings.Contains(got.Error, "/in/bad.txt (ValueError: bad pixel)") || !strings.Contains(got.Error, "error_threshold (0)") {
		t.Errorf("job %s, error %q", got.Status, got.Error)
	}
}

// A parallel job's rank 1 whose node is cut off (lost, not preempted)
// gives its mini-batches back and the job runs on with rank 0; the job's
// events say so.
func TestParallelJobRankLost(t *testing.T) {
	h, tasks, nodes := startParallel(t, leaseConfig, &job.ParallelSpec{InputData: "${{inputs.data}}", EntryScript: "score.py"})
	led := parallel.New(parallel.Config{Store: h.store, Files: h.files, Key: h.secretsKey})
	c, err := led.Authenticate(h.ctx, tasks[1].AttemptID, tasks[1].Parallel.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := led.Plan(h.ctx, c, pproto.PlanRequest{Kind: pproto.KindFiles, Items: 4, MiniBatches: 4, Fingerprint: "f"}); err != nil {
		t.Fatal(err)
	}
	if r, err := led.Lease(h.ctx, c, pproto.LeaseRequest{Rank: 1, Max: 2}); err != nil || len(r.Leases) != 2 {
		t.Fatalf("rank 1's lease: %+v %v", r, err)
	}
	h.agent(nodes[1]).partitioned = true
	h.step(20 * time.Second)
	h.step(time.Second)
	got := h.wantJob("pj", job.JobRunning)
	if p := got.ParallelProgress; p == nil || p.InFlight != 0 || p.Left != 4 {
		t.Fatalf("progress after rank 1 was lost: %+v", p)
	}
	r, err := led.Lease(h.ctx, c, pproto.LeaseRequest{Rank: 0, Max: 4})
	if err != nil || len(r.Leases) != 4 || r.Leases[0] != (pproto.Lease{Index: 0, Try: 2}) {
		t.Fatalf("rank 0's lease after rank 1 was lost: %+v %v", r, err)
	}
	evs, err := h.svc.ListJobEvents(h.ctx, ws, "pj")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		found = found || strings.Contains(e.Reason, "rank 1 on node "+nodes[1]+" was lost: the other ranks take over its mini-batches")
	}
	if !found {
		t.Errorf("no rank_left event: %+v", evs)
	}
}
