package service_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// An agent whose machine is being taken back (a Slurm pilot's SIGTERM)
// says so: the node is preempted at once, its rank is told to stop as
// preempted, and the job is requeued on another node without spending a
// retry — never back on the node that is going.
func TestAgentLeaving(t *testing.T) {
	h := newHarness(t, leaseConfig)
	h.compute("cpu", 0, 2, 120)
	h.submit("j1", "cpu", 1, "")
	h.step(0)
	node := oneNode(t, h)
	h.step(0)
	task := runOn(t, h, node, "j1")
	resp, err := h.svc.SyncNode(h.ctx, node, &nodekind.AgentSyncRequest{Running: []nodekind.RankRef{task.RankRef}, Leaving: "SIGTERM"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Stop) != 1 || resp.Stop[0].Reason != "preempted" {
		t.Fatalf("stop orders %+v; want the rank stopped as preempted", resp.Stop)
	}
	if n := h.node("cpu", node); n.State != nodekind.NodePreempted {
		t.Fatalf("node state %s; want preempted", n.State)
	}
	h.wantEvent("cpu", "taken back by its provider: SIGTERM")
	h.finish(node, task, nodekind.RankPreempted)
	j := h.job("j1")
	if j.Status != job.JobQueued || j.FailedAttempts != 0 || j.InfraRequeues != 1 {
		t.Fatalf("job %+v; want queued again, no retry spent", j)
	}
	// A second notice changes nothing.
	if _, err := h.svc.SyncNode(h.ctx, node, &nodekind.AgentSyncRequest{Leaving: "SIGTERM"}, 0); err != nil {
		t.Fatal(err)
	}
	if c := h.countEvents("cpu", "taken back"); c != 1 {
		t.Errorf("%d preemption events; want 1", c)
	}
}

// A rank its agent ends as preempted before the server heard why (the
// signal reached the job first) takes its node out of service: the job
// being requeued is not placed back on it.
func TestRankPreemptedByItsAgent(t *testing.T) {
	h := newHarness(t, leaseConfig)
	h.compute("cpu", 0, 2, 120)
	h.submit("j1", "cpu", 1, "")
	h.step(0)
	node := oneNode(t, h)
	h.step(0)
	task := runOn(t, h, node, "j1")
	h.finish(node, task, nodekind.RankPreempted)
	if n := h.node("cpu", node); n.State != nodekind.NodePreempted && n.State != nodekind.NodeLeaving {
		t.Fatalf("node state %s; want out of service", n.State)
	}
	if n := h.node("cpu", node); n.CurrentAttemptID != "" {
		t.Fatalf("the requeued job was placed back on the node being taken back (attempt %s)", n.CurrentAttemptID)
	}
}
