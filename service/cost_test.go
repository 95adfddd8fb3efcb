package service_test

import (
	"math"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// The cost report prices the usage ledger: a DS3_v2 node ($0.293/h) that
// lives 3 hours, 2 of them running one job, costs the same whichever way
// it is grouped; by user the job's 2 hours are its submitter's and the
// rest is (idle); job show prices the job's own 2 hours.
func TestCostReportAddsUp(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	start := h.clock.Now()
	minN, maxN, idle := 0, 1, 3600
	spec := &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2", MinInstances: &minN, MaxInstances: &maxN,
		IdleTimeBeforeScaleDown: &idle, Tags: map[string]string{"team": "vision"}}
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	h.ctrl.ReconcileComputes(h.ctx)
	j := h.submit("train", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	node := h.nodeIDs("cpu")[0]
	task := h.start(node)
	h.step(2 * time.Hour)
	h.finish(node, task, nodekind.RankCompleted)
	h.step(0)
	h.step(time.Hour) // idle an hour: released
	h.step(0)
	if n := len(h.nodes("cpu")); n != 0 {
		t.Fatalf("%d nodes left", n)
	}
	until := h.clock.Now().Add(time.Hour)
	total := -1.0
	for _, g := range []string{"compute", "node", "size", "tier", "tag:team", "user", "job"} {
		lines, err := h.svc.CostReport(admin, ws, start, until, g)
		if err != nil {
			t.Fatal(err)
		}
		sum, secs := 0.0, 0.0
		for _, l := range lines {
			sum += l.USD
			secs += l.NodeSeconds
		}
		if math.Abs(secs-3*3600) > 2 || math.Abs(sum-3*0.293) > 0.001 {
			t.Errorf("by %s: %v node-seconds, $%v; want 3 node-hours, $0.879 (%+v)", g, secs, sum, lines)
		}
		if total >= 0 && math.Abs(total-sum) > 1e-9 {
			t.Errorf("by %s the total is $%v, by compute $%v", g, sum, total)
		}
		total = sum
		if g == "user" {
			byKey := map[string]float64{}
			for _, l := range lines {
				byKey[l.Key] = l.NodeSeconds
			}
			if math.Abs(byKey[j.CreatedBy]-2*3600) > 2 || math.Abs(byKey["(idle)"]-3600) > 2 {
				t.Errorf("by user: %v, want %s 2 h and (idle) 1 h", byKey, j.CreatedBy)
			}
		}
		if g == "tag:team" && (len(lines) != 1 || lines[0].Key != "vision") {
			t.Errorf("by tag:team: %+v", lines)
		}
	}
	v, err := h.svc.FindJobWithCost(h.ctx, ws, "train")
	if err != nil {
		t.Fatal(err)
	}
	if v.Cost == nil || math.Abs(v.Cost.NodeSeconds-7200) > 2 || math.Abs(v.Cost.USD-0.586) > 0.001 {
		t.Errorf("job cost %+v, want 7200 node-seconds, $0.586", v.Cost)
	}
	if _, err := h.svc.CostReport(admin, ws, start, until, "colour"); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("a bad group_by: %v", err)
	}
}
