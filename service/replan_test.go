package service_test

import (
	"slices"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// A rank's report asks the server for a placement pass only when a pass
// may now place something: a node freed with no next job, or a job queued
// again. A rank that starts, or one that ends and hands its node the next
// job at once, changes neither; each of those asked for a pass over every
// queue's heads and every cluster, one or two per job on the job path.
// What a report changes is its compute's alone: the pass it asks for is
// over that compute's queue.
func TestRankReportsAskForAPassOnlyWhenOneCanPlace(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 3600) // one node: the second job waits for it
	h.submit("first", "cpu", 1, "")
	h.submit("second", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]

	// want is how many passes over the compute's queue the report asks
	// for; none may be over every queue: what it changes is the
	// compute's alone.
	cpu := compute.ComputeKey(ws, "cpu")
	asked := func(what string, want int, report func()) {
		t.Helper()
		before := h.notified.Load()
		h.changedMu.Lock()
		h.changed = nil
		h.changedMu.Unlock()
		report()
		if got := h.notified.Load() - before; got != 0 {
			t.Errorf("%s asked for %d passes over every queue, want 0", what, got)
		}
		h.changedMu.Lock()
		defer h.changedMu.Unlock()
		if len(h.changed) != want || want > 0 && h.changed[0] != cpu {
			t.Errorf("%s asked for passes over %q, want %d over %q", what, h.changed, want, cpu)
		}
	}
	var task *node.AgentTask
	asked("a rank that starts", 0, func() { task = h.start(n) })
	var next []*node.AgentTask
	asked("a rank that ends and hands its node the next job", 0, func() {
		code := 0
		var err error
		next, err = h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, &node.RankReport{State: node.RankCompleted, ExitCode: &code})
		if err != nil {
			t.Fatal(err)
		}
		delete(h.agent(n).running, task.RankRef)
	})
	if len(next) != 1 || next[0].JobName != "second" {
		t.Fatalf("the freed node was handed %+v, want the second job", next)
	}
	h.agent(n).running[next[0].RankRef] = next[0]
	asked("the handed job's start", 0, func() { h.report(n, next[0], node.RankRunning, nil) })
	// Preempted: the job is queued again, and the node marked as taken.
	asked("a rank preempted", 1, func() { h.finish(n, next[0], node.RankPreempted) })
	h.wantJob("second", job.JobQueued)

	h.step(0)
	h.joinAll()
	h.step(0)
	n = h.nodeIDs("cpu")[0]
	asked("the requeued job's start", 0, func() { task = h.start(n) })
	asked("a rank that ends with nothing queued", 1, func() { h.finish(n, task, node.RankCompleted) })
	h.wantJob("second", job.JobCompleted)
}

// A node that joins asks for a pass over its own compute's queue alone:
// it is idle for that queue only, and counted against every quota since
// its creation. The pass over every queue's heads and every cluster it
// asked for took 50 ms at 10,000 nodes, and new jobs' decisions waited
// behind it.
func TestANodeJoinAsksForItsComputesPassAlone(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 3600)
	h.submit("first", "cpu", 1, "")
	h.step(0)
	before := h.notified.Load()
	h.changedMu.Lock()
	h.changed = nil // the cluster's creation named it too
	h.changedMu.Unlock()
	h.joinAll()
	if got := h.notified.Load() - before; got != 0 {
		t.Errorf("the join asked for %d passes over every queue, want 0", got)
	}
	h.changedMu.Lock()
	defer h.changedMu.Unlock()
	if want := compute.ComputeKey(ws, "cpu"); !slices.Equal(h.changed, []string{want}) {
		t.Errorf("the join named computes %q, want [%q]", h.changed, want)
	}
}

// A new cluster asks for a pass over its own queue alone: it has no
// nodes and no jobs yet, and takes quota only as it grows. A change to an
// existing one (a lower max_instances frees quota for the others) still
// asks for a pass over every queue.
func TestANewClusterAsksForItsOwnPassAlone(t *testing.T) {
	h := newHarness(t, "")
	before := h.notified.Load()
	h.compute("cpu", 0, 2, 3600)
	if got := h.notified.Load() - before; got != 0 {
		t.Errorf("creating a cluster asked for %d passes over every queue, want 0", got)
	}
	h.changedMu.Lock()
	if want := compute.ComputeKey(ws, "cpu"); !slices.Equal(h.changed, []string{want}) {
		t.Errorf("creating a cluster named computes %q, want [%q]", h.changed, want)
	}
	h.changedMu.Unlock()
	before = h.notified.Load()
	one := 1
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2", MaxInstances: &one}, ""); err != nil {
		t.Fatal(err)
	}
	if got := h.notified.Load() - before; got != 1 {
		t.Errorf("changing a cluster asked for %d passes over every queue, want 1", got)
	}
}

// A rank's end whose node the hand-on cannot give the queue's head (a
// job of two nodes) asks for a pass: the freed node and another free one
// can take it together, which only a pass decides.
func TestARefusedHandOnAsksForAPass(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 2, 3600)
	h.submit("one", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	task := h.start(n)
	h.submit("pair", "cpu", 2, "")
	h.step(0)
	h.joinAll() // the second node, for the pair
	h.step(0)
	h.wantJob("pair", job.JobQueued)
	before := h.notified.Load()
	h.changedMu.Lock()
	h.changed = nil
	h.changedMu.Unlock()
	code := 0
	next, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, &node.RankReport{State: node.RankCompleted, ExitCode: &code})
	if err != nil {
		t.Fatal(err)
	}
	delete(h.agent(n).running, task.RankRef)
	if len(next) != 0 {
		t.Fatalf("the freed node alone was handed %+v; the pair needs two", next)
	}
	cpu := compute.ComputeKey(ws, "cpu")
	h.changedMu.Lock()
	changed := slices.Clone(h.changed)
	h.changedMu.Unlock()
	if got := h.notified.Load() - before; got != 0 || !slices.Equal(changed, []string{cpu}) {
		t.Errorf("an end with the hand-on refused asked for %d passes over every queue and passes over %q, want 0 and one over %q", got, changed, cpu)
	}
	// The pass it asked for, over its compute alone, places the pair.
	if err := h.ctrl.RunPlacementForChanged(h.ctx, h.clock.Now(), map[string]bool{cpu: true}); err != nil {
		t.Fatal(err)
	}
	h.wantJob("pair", job.JobPreparing)
}

// A deleted cluster asks for a pass over its own queue and nodes alone,
// and each node it releases for the computes its quota was shared with
// (its location's, here the other cluster): not a pass over every
// queue for either.
func TestADeletedClusterAndItsReleasesAskForTheirComputesPasses(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 3600)
	h.compute("gpu", 0, 1, 3600)
	h.submit("one", "cpu", 1, "")
	h.step(0)
	n := h.joinAll()[0]
	h.step(0)
	h.finish(n, h.start(n), node.RankCompleted)
	h.step(0)

	h.changedMu.Lock()
	h.changed = nil
	h.changedMu.Unlock()
	before := h.notified.Load()
	if _, err := h.svc.DeleteCompute(h.ctx, ws, "cpu", ""); err != nil {
		t.Fatal(err)
	}
	if got := h.notified.Load() - before; got != 0 {
		t.Errorf("deleting a cluster asked for %d passes over every queue, want 0", got)
	}
	cpu, gpu := compute.ComputeKey(ws, "cpu"), compute.ComputeKey(ws, "gpu")
	h.changedMu.Lock()
	if !slices.Equal(h.changed, []string{cpu}) {
		t.Errorf("deleting a cluster named computes %q, want [%q]", h.changed, cpu)
	}
	h.changed = nil
	h.changedMu.Unlock()

	// The pass releases its idle node; the release names both clusters
	// of the location, the deleted one first.
	before = h.notified.Load()
	h.pass()
	if err := h.store.View(h.ctx, func(tx store.Tx) error { _, err := tx.GetNode(n); return err }); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("node %s of the deleted cluster: %v, want it gone", n, err)
	}
	h.changedMu.Lock()
	defer h.changedMu.Unlock()
	if !slices.Contains(h.changed, cpu) || !slices.Contains(h.changed, gpu) {
		t.Errorf("releasing the deleted cluster's node named computes %q, want %q and %q", h.changed, cpu, gpu)
	}
	if got := h.notified.Load() - before; got != 0 {
		t.Errorf("the pass that released the node asked for %d passes over every queue, want 0", got)
	}
}
