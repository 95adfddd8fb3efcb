package service_test

import (
	"math"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// The controller records a cluster's node counts when they change, and
// the cost so far is node-hours times the size's price: two DS3_v2 nodes
// ($0.293 an hour) for an hour cost $0.586.
func TestNodeSamplesAndCost(t *testing.T) {
	h := newHarness(t, "")
	h.compute("cpu", 0, 2, 3600)
	h.submit("j1", "cpu", 2, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	h.step(0)
	start := h.clock.Now()
	samples, err := h.svc.NodeHistory(h.ctx, ws, "cpu", start.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) == 0 || samples[len(samples)-1].Billed() != 2 {
		t.Fatalf("samples %+v, want the last to bill 2 nodes", samples)
	}
	n := len(samples)
	h.step(time.Minute) // nothing changed: no new sample
	if s, _ := h.svc.NodeHistory(h.ctx, ws, "cpu", start.Add(-time.Hour)); len(s) != n {
		t.Errorf("%d samples after a pass without change, want %d", len(s), n)
	}
	h.step(node.NodeSampleInterval) // a cluster with nodes is sampled every interval
	if s, _ := h.svc.NodeHistory(h.ctx, ws, "cpu", start.Add(-time.Hour)); len(s) != n+1 {
		t.Errorf("%d samples after %s, want %d", len(s), node.NodeSampleInterval, n+1)
	}
	c := h.svc.ClusterCost(samples[len(samples)-1:], samples[len(samples)-1].Time.Add(time.Hour))
	if math.Abs(c.NodeHours-2) > 1e-9 || math.Abs(c.USD-0.586) > 1e-9 || c.LowPriority != 0 {
		t.Errorf("cost of 2 nodes for an hour: %+v, want 2 node-hours, $0.586 dedicated", c)
	}
	low := *samples[len(samples)-1]
	low.Tier = compute.TierLowPriority
	if c := h.svc.ClusterCost([]*node.NodeSample{&low}, low.Time.Add(time.Hour)); c.LowPriority <= 0 || c.LowPriority >= 0.586 || c.Dedicated != 0 {
		t.Errorf("low-priority cost %+v, want less than the dedicated price", c)
	}
}
