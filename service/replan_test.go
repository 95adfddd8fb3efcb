package service_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// A rank's report asks the server for a placement pass only when a pass
// may now place something: a node freed with no next job, or a job queued
// again. A rank that starts, or one that ends and hands its node the next
// job at once, changes neither; each of those asked for a pass over every
// queue's heads and every cluster, one or two per job on the job path.
func TestRankReportsAskForAPassOnlyWhenOneCanPlace(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 1, 3600) // one node: the second job waits for it
	h.submit("first", "cpu", 1, "")
	h.submit("second", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]

	asked := func(what string, want int64, report func()) {
		t.Helper()
		before := h.notified.Load()
		report()
		if got := h.notified.Load() - before; got != want {
			t.Errorf("%s asked for %d placement passes, want %d", what, got, want)
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
