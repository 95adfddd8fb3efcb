package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/money"
)

// A small budget's warnings say what was spent in figures that can be
// read against its limit: a DS3_v2 node ($0.293/h) for some seconds has
// spent about a thousandth of a dollar, which reads 0.001xxx, not 0.00.
func TestBudgetEventsShowSmallAmounts(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	minN, maxN, idle := 0, 1, 3600
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2",
		MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle}, ""); err != nil {
		t.Fatal(err)
	}
	h.ctrl.ReconcileComputes(h.ctx)
	if _, err := h.svc.CreateBudget(admin, ws, &money.Budget{Scope: "workspace", Limit: 0.001, Period: "month"}); err != nil {
		t.Fatal(err)
	}
	h.submit("short", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	h.start(h.nodeIDs("cpu")[0])
	h.step(8 * time.Second)
	h.step(11 * time.Second) // priced every 10 s
	evs, err := h.svc.ListBudgetEvents(admin, ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 {
		t.Fatal("no budget event")
	}
	for _, e := range evs {
		if strings.Contains(e.Reason, "0.00 of") || !strings.Contains(e.Reason, " of 0.001 USD") {
			t.Errorf("budget event %q: the spend must read against the 0.001 USD limit", e.Reason)
		}
	}
}
