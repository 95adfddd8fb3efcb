package autoscaler_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
)

// TestPlanCodes checks the code of every kind of decision. The fixtures
// pick names and situations whose sentences would mislead a reader of the
// text (a node named after quota, a scale-up whose sentence mentions idle
// nodes, a budget block worded without "budget "): the code says what the
// decision is regardless of how the sentence reads.
func TestPlanCodes(t *testing.T) {
	// Arrivals every 10 minutes: the adaptive policy keeps a node idle
	// 3 minutes (past its 2-minute fixed timeout) for the next one.
	var arrivals []time.Time
	for i := range 20 {
		arrivals = append(arrivals, at(time.Duration(i)*10*time.Minute))
	}
	adaptive := func(c *autoscaler.Cluster) {
		c.Idle = &autoscaler.IdlePolicy{Fixed: 120 * sec, Adaptive: true, ProvisionDelay: 5 * time.Minute, NodePricePerHour: 1}
	}
	tests := []struct {
		name string
		c    autoscaler.Cluster
		snap autoscaler.Snapshot // Clusters is c; Quotas from here
		now  time.Time
		want []autoscaler.ReasonCode
	}{
		{name: "demand, with idle nodes in the sentence", now: at(0),
			c: cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 4
				c.QueuedNodeDemand = 2
				c.Nodes = []autoscaler.Node{idle("idle-1", at(0))}
			}),
			want: []autoscaler.ReasonCode{autoscaler.ReasonDemand}},
		{name: "min_instances scale-up", now: at(0),
			c:    cluster("cpu", func(c *autoscaler.Cluster) { c.MinInstances = 1 }),
			want: []autoscaler.ReasonCode{autoscaler.ReasonMinInstances}},
		{name: "quota caps a scale-up and blocks the rest", now: at(0),
			c:    cluster("cpu", func(c *autoscaler.Cluster) { c.QueuedNodeDemand = 2 }),
			snap: autoscaler.Snapshot{Quotas: quota(4, 100, 100)},
			want: []autoscaler.ReasonCode{autoscaler.ReasonQuota, autoscaler.ReasonQuota}},
		{name: "budget block worded without the budget prefix", now: at(0),
			c: cluster("cpu", func(c *autoscaler.Cluster) {
				c.QueuedNodeDemand = 1
				c.BudgetBlocked = "spending limit of team ml reached"
			}),
			want: []autoscaler.ReasonCode{autoscaler.ReasonBudget}},
		{name: "tier fallback: dedicated scale-up, then a quota block that names tier_fallback", now: at(0),
			c: cluster("cpu", func(c *autoscaler.Cluster) {
				c.LowPriority, c.FallbackAfter, c.MaxInstances = true, time.Minute, 3
				c.QueuedNodeDemand, c.LongWaitDemand = 3, 1
			}),
			snap: autoscaler.Snapshot{Quotas: quota(100, 100, 0)},
			want: []autoscaler.ReasonCode{autoscaler.ReasonTierFallback, autoscaler.ReasonQuota}},
		{name: "deleting a node named quota-idle", now: at(0),
			c:    cluster("cpu", func(c *autoscaler.Cluster) { c.Deleting = true; c.Nodes = []autoscaler.Node{idle("quota-idle", at(0))} }),
			want: []autoscaler.ReasonCode{autoscaler.ReasonDeleting}},
		{name: "max_instances lowered", now: at(0),
			c:    cluster("cpu", func(c *autoscaler.Cluster) { c.MaxInstances = 0; c.Nodes = []autoscaler.Node{idle("n-1", at(0))} }),
			want: []autoscaler.ReasonCode{autoscaler.ReasonMaxInstances}},
		{name: "idle release of a node named adaptive-min_instances", now: at(time.Hour),
			c:    cluster("cpu", func(c *autoscaler.Cluster) { c.Nodes = []autoscaler.Node{idle("adaptive-min_instances", at(0))} }),
			want: []autoscaler.ReasonCode{autoscaler.ReasonIdle}},
		{name: "kept by min_instances", now: at(time.Hour),
			c:    cluster("cpu", func(c *autoscaler.Cluster) { c.MinInstances = 1; c.Nodes = []autoscaler.Node{idle("n-1", at(0))} }),
			want: []autoscaler.ReasonCode{autoscaler.ReasonMinInstances}},
		{name: "adaptive release with too few arrivals", now: at(time.Hour),
			c:    cluster("cpu", func(c *autoscaler.Cluster) { adaptive(c); c.Nodes = []autoscaler.Node{idle("n-1", at(0))} }),
			want: []autoscaler.ReasonCode{autoscaler.ReasonAdaptive}},
		{name: "adaptive keeps one node and releases the other", now: at(190*time.Minute + 3*time.Minute),
			c: cluster("cpu", func(c *autoscaler.Cluster) {
				adaptive(c)
				c.RecentArrivals = arrivals
				c.Nodes = []autoscaler.Node{idle("n-1", at(190*time.Minute)), idle("n-2", at(190*time.Minute))}
			}),
			want: []autoscaler.ReasonCode{autoscaler.ReasonAdaptive, autoscaler.ReasonAdaptive}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := tt.snap
			snap.Clusters = []autoscaler.Cluster{tt.c}
			got := autoscaler.Plan(snap, tt.now)
			var codes []autoscaler.ReasonCode
			for _, d := range got {
				codes = append(codes, d.Code)
			}
			if len(codes) != len(tt.want) {
				t.Fatalf("codes %v, want %v; decisions %s", codes, tt.want, show(got))
			}
			for i := range codes {
				if codes[i] != tt.want[i] {
					t.Fatalf("codes %v, want %v; decisions %s", codes, tt.want, show(got))
				}
			}
		})
	}
}
