package autoscaler_test

import (
	"reflect"
	"testing"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/catalog"
)

// TestOnlyDecidesAsAWholePass: planning one cluster alone, with the other
// clusters' nodes as reserved quota, gives that cluster the decisions a
// pass over every cluster gives it, quota-bound ones included; the
// clusters left out are not planned.
func TestOnlyDecidesAsAWholePass(t *testing.T) {
	limits := map[string]catalog.QuotaLimits{"local": {TotalDedicatedVCPUs: 40, LowPriorityVCPUs: 8, DefaultFamilyDedicatedVCPUs: 32}}
	busy := cluster("a", func(c *autoscaler.Cluster) {
		c.MaxInstances = 4
		c.Nodes = []autoscaler.Node{node("a1", autoscaler.NodeRunning), node("a2", autoscaler.NodeRunning), preparing("a3", t0), {ID: "a4", State: autoscaler.NodeLeaving, CreatedOn: t0}}
	})
	low := cluster("l", func(c *autoscaler.Cluster) {
		c.LowPriority, c.MaxInstances = true, 3
		c.Nodes = []autoscaler.Node{node("l1", autoscaler.NodeRunning), {ID: "l2", State: autoscaler.NodeRunning, Dedicated: true, CreatedOn: t0}}
	})
	for _, tc := range []struct {
		name   string
		demand int
	}{{"within quota", 1}, {"quota-bound", 5}, {"no demand", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			target := cluster("b", func(c *autoscaler.Cluster) { c.MaxInstances, c.QueuedNodeDemand = 6, tc.demand })
			later := cluster("c", func(c *autoscaler.Cluster) { c.MaxInstances, c.QueuedNodeDemand = 6, 2 })
			s := autoscaler.Snapshot{Clusters: []autoscaler.Cluster{later, busy, target, low}, Quotas: limits,
				Reserved: []autoscaler.Reservation{{Location: "local", Workspace: "ws", Family: family, VCPUs: 4}}}
			var want []autoscaler.Decision
			for _, d := range autoscaler.Plan(s, at(10*sec)) {
				if d.Cluster == "ws/b" {
					want = append(want, d)
				}
			}
			got := autoscaler.Plan(s.Only(map[string]bool{"ws/b": true}), at(10*sec))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("planned alone:\n%+v\nin a whole pass:\n%+v", got, want)
			}
			if tc.demand == 5 && (len(got) == 0 || got[0].Action != autoscaler.ActionScaleUp || got[0].Count >= 5) {
				t.Fatalf("the quota-bound case is not bound by quota: %+v", got)
			}
		})
	}
}
