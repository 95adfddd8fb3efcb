package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// A cluster with idle_time_before_scale_down: adaptive keeps an idle node
// past the fixed 120 s when its jobs have been coming every 4 minutes (a
// new node takes 3), and says why in its events.
func TestAdaptiveIdleKeepsTheNode(t *testing.T) {
	h := newHarness(t, `
locations:
  - name: local
    provisioning_delay: 3m
`)
	minN, maxN, idle := 0, 2, 120
	spec := &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2", MinInstances: &minN, MaxInstances: &maxN,
		IdleTimeBeforeScaleDown: &idle, IdlePolicy: compute.IdlePolicyAdaptive}
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	if err := h.ctrl.ReconcileComputes(h.ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 14 {
		name := "j" + string(rune('a'+i))
		h.submit(name, "cpu", 1, "")
		h.step(0)
		h.joinAll()
		h.step(0)
		task := h.start(h.nodeIDs("cpu")[0])
		h.finish(h.nodeIDs("cpu")[0], task, node.RankCompleted)
		h.step(0)
		h.step(4 * time.Minute)
	}
	if n := len(h.nodes("cpu")); n != 1 {
		t.Fatalf("%d nodes; the adaptive policy should have kept the one node between jobs", n)
	}
	found := false
	for _, e := range h.events("cpu") {
		if strings.Contains(e, "kept idle") && strings.Contains(e, "chance of a job within") && strings.Contains(e, "provisioning takes 3m0s") {
			found = true
		}
	}
	if !found {
		t.Errorf("no 'kept idle' reason among the events:\n%s", strings.Join(h.events("cpu"), "\n"))
	}
	if p := h.findCompute("cpu"); p.IdlePolicy != compute.IdlePolicyAdaptive || *p.IdleTimeBeforeScaleDown != 120 {
		t.Errorf("compute %v %v", p.IdlePolicy, *p.IdleTimeBeforeScaleDown)
	}
}
