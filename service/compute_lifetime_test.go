package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// A compute deleted and created again under its name is a new compute:
// its event log, its node history (the studio's chart and "cost so far
// ... since") and its cost report line hold only what happened since it
// was created, never the old one's. The old one's usage stays in the
// workspace's report, under a line of its own.
func TestRecreatedComputeStartsAfresh(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	start := h.clock.Now()
	minN, maxN, idle := 0, 1, 60
	spec := func(team string) *compute.ComputeSpec {
		return &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2", MinInstances: &minN, MaxInstances: &maxN,
			IdleTimeBeforeScaleDown: &idle, Tags: map[string]string{"team": team}}
	}
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, spec("old"), ""); err != nil {
		t.Fatal(err)
	}
	h.ctrl.ReconcileComputes(h.ctx)
	h.submit("train", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	node := h.nodeIDs("cpu")[0]
	task := h.start(node)
	h.step(time.Hour)
	h.finish(node, task, nodekind.RankCompleted)
	h.step(0)
	h.step(2 * time.Minute) // idle past its timeout: released
	h.step(0)
	if _, err := h.svc.DeleteCompute(h.ctx, ws, "cpu", ""); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5 && h.findComputeOrNil("cpu") != nil; i++ {
		h.step(time.Second)
	}
	if c := h.findComputeOrNil("cpu"); c != nil {
		t.Fatalf("compute still %s after its delete", c.ProvisioningState)
	}
	oldEvents := len(h.events("cpu"))
	if oldEvents == 0 {
		t.Fatal("the deleted compute has no events")
	}

	h.step(90 * time.Second)
	created := h.clock.Now()
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, spec("new"), ""); err != nil {
		t.Fatal(err)
	}
	h.ctrl.ReconcileComputes(h.ctx)
	h.step(time.Minute)

	evs, err := h.svc.ListComputeEvents(h.ctx, ws, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Time.Before(created) {
			t.Errorf("the new compute's log shows the old one's event at %s (created %s): %s: %s", e.Time.Format(time.TimeOnly), created.Format(time.TimeOnly), e.Kind, e.Reason)
		}
	}
	if len(evs) == 0 {
		t.Error("the new compute has no events")
	}
	samples, err := h.svc.NodeHistory(h.ctx, ws, "cpu", created)
	if err != nil {
		t.Fatal(err)
	}
	cost := h.svc.ClusterCost(samples, h.clock.Now())
	if cost.USD != 0 || cost.NodeHours != 0 || (!cost.Since.IsZero() && cost.Since.Before(created)) {
		t.Errorf("the new compute's cost so far: %+v (created %s): the old one's", cost, created.Format(time.TimeOnly))
	}
	lines, err := h.svc.CostReport(admin, ws, start, h.clock.Now(), "compute")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.Key == "cpu" {
			t.Errorf("the cost report puts the old compute's %.2f node-hours on the new cpu: %+v", l.NodeHours, lines)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0].Key, "deleted") {
		t.Errorf("cost report by compute: %+v, want one line for the deleted cpu", lines)
	}
	byTag, err := h.svc.CostReport(admin, ws, start, h.clock.Now(), "tag:team")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range byTag {
		if l.Key == "new" {
			t.Errorf("the old compute's usage is reported under the new one's tag: %+v", byTag)
		}
	}
}

// findComputeOrNil is findCompute, nil once the compute is gone.
func (h *harness) findComputeOrNil(name string) *compute.Compute {
	h.t.Helper()
	c, err := h.svc.FindCompute(h.ctx, ws, name)
	if err != nil {
		return nil
	}
	return c
}
