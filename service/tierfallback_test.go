package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// tier_fallback: after 10m — with low-priority quota for one node, the
// second job waits for low-priority capacity (its reason says the
// fallback is coming), then gets a dedicated node; once the cluster has
// shrunk, it grows on low-priority nodes again.
func TestTierFallback(t *testing.T) {
	h := newHarness(t, `
locations:
  - name: local
    quota:
      low_priority_vcpus: 4
`)
	minN, maxN, idle := 0, 3, 60
	spec := &compute.ComputeSpec{Name: "lowpri", Type: "amlcompute", Size: "Standard_DS3_v2", Tier: compute.TierLowPriority,
		MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle, TierFallback: &compute.TierFallback{After: "10m"}}
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	h.ctrl.ReconcileComputes(h.ctx)
	for _, bad := range []*compute.ComputeSpec{
		{Name: "ded1", Type: "amlcompute", Size: "Standard_DS3_v2", TierFallback: &compute.TierFallback{After: "10m"}},
		{Name: "low2", Type: "amlcompute", Size: "Standard_DS3_v2", Tier: compute.TierLowPriority, TierFallback: &compute.TierFallback{After: "soon"}},
	} {
		if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, bad, ""); core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "tier_fallback") {
			t.Errorf("%s: %v", bad.Name, err)
		}
	}
	h.submit("a", "lowpri", 1, "")
	h.submit("b", "lowpri", 1, "")
	h.step(0)
	h.step(time.Second)
	nodes := h.nodes("lowpri")
	if len(nodes) != 1 || !nodes[0].LowPriority {
		t.Fatalf("%d nodes (first low priority: %v; %s), want one low-priority node", len(nodes), nodes[0].LowPriority, strings.Join(h.events("lowpri"), " / "))
	}
	h.joinAll()
	h.step(0)
	if j := h.wantJob("b", job.JobQueued); !strings.Contains(j.StatusReason, "low-priority quota") || !strings.Contains(j.StatusReason, "tier_fallback") {
		t.Errorf("b's reason %q", j.StatusReason)
	}
	h.step(10 * time.Minute)
	h.step(time.Second)
	var dedicated *node.Node
	for _, n := range h.nodes("lowpri") {
		if !n.LowPriority {
			dedicated = n
		}
	}
	if dedicated == nil {
		t.Fatalf("no dedicated node after 10 minutes: %+v", h.nodes("lowpri"))
	}
	h.wantEvent("lowpri", "on dedicated nodes: 1 node(s) needed by jobs that waited over 10m0s for low-priority capacity")
	if u := h.usage("local", "standardDSv2Family"); u.CurrentValue != 4 {
		t.Errorf("dedicated usage %d vCPUs, want the fallback node's 4", u.CurrentValue)
	}
	h.joinAll()
	h.step(0)
	h.step(0)
	for _, name := range []string{"a", "b"} {
		j := h.job(name)
		if j.Status != job.JobPreparing && j.Status != job.JobRunning {
			t.Fatalf("job %s is %s", name, j.Status)
		}
	}
	if j := h.job("b"); !strings.Contains(j.StatusReason, "dedicated") || !strings.Contains(j.StatusReason, "tier_fallback") {
		t.Errorf("b on the dedicated node: reason %q does not say why", j.StatusReason)
	}
	// The dedicated node's job ends first, then the low-priority one's: a
	// new job goes back to the low-priority node although the dedicated
	// one has been idle longer, and the dedicated node goes after its
	// idle minute.
	var lowID string
	for _, n := range h.nodes("lowpri") {
		if n.LowPriority {
			lowID = n.ID
		}
	}
	tasks := map[string]*node.AgentTask{}
	for _, id := range h.nodeIDs("lowpri") {
		tasks[id] = h.start(id)
	}
	h.finish(dedicated.ID, tasks[dedicated.ID], node.RankCompleted)
	h.step(5 * time.Second)
	h.finish(lowID, tasks[lowID], node.RankCompleted)
	h.step(time.Second)
	h.submit("c", "lowpri", 1, "")
	h.step(0)
	if n := h.node("lowpri", lowID); n.CurrentJobName != "c" {
		t.Fatalf("c went to %s, not the low-priority node %s", h.job("c").StatusReason, lowID)
	}
	h.step(2 * time.Minute)
	h.step(0)
	if nodes := h.nodes("lowpri"); len(nodes) != 1 || !nodes[0].LowPriority {
		t.Errorf("after the dedicated node's idle minute: %+v, want the low-priority node alone", nodes)
	}
}
