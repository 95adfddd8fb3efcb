package autoscaler_test

import (
	"testing"

	"github.com/shoal-ml/shoal/decide/autoscaler"
)

// A scale window lowering max_instances to 0 releases the idle and
// preparing nodes at once — not after idle_time_before_scale_down — with
// the window's code and sentence, and never a running node.
func TestPlanScaleWindowShedsIdleNodesAtOnce(t *testing.T) {
	const why = "max_instances is 0 in scale window nights until 07:00 (UTC)"
	c := cluster("cpu", func(c *autoscaler.Cluster) {
		c.MinInstances, c.MaxInstances = 0, 0
		c.Window, c.WindowName = why, "nights"
		c.QueuedNodeDemand = 3
		c.Nodes = []autoscaler.Node{idle("n-1", at(0)), node("n-2", autoscaler.NodeRunning), preparing("n-3", at(0))}
	})
	got := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{c}}, at(sec)) // idle 1 s of 120
	want := []autoscaler.Decision{
		{Cluster: "ws/cpu", Action: autoscaler.ActionRelease, NodeIDs: []string{"n-1"}, From: 3, To: 2, Code: autoscaler.ReasonScaleWindow, Reason: "release n-1: " + why},
		{Cluster: "ws/cpu", Action: autoscaler.ActionRelease, NodeIDs: []string{"n-3"}, From: 2, To: 1, Code: autoscaler.ReasonScaleWindow, Reason: "release n-3: " + why},
	}
	if show(got) != show(want) {
		t.Fatalf("got\n%s\nwant\n%s", show(got), show(want))
	}
	for i := range got {
		if got[i].Code != want[i].Code {
			t.Fatalf("decision %d code %s, want %s", i, got[i].Code, want[i].Code)
		}
	}
}

// The morning window's min_instances scales the cluster up, and the
// reason names the window.
func TestPlanScaleWindowMinScalesUp(t *testing.T) {
	c := cluster("cpu", func(c *autoscaler.Cluster) {
		c.MinInstances, c.MaxInstances = 2, 8
		c.WindowName = "mornings"
	})
	got := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{c}}, at(0))
	if len(got) != 1 || got[0].Action != autoscaler.ActionScaleUp || got[0].Count != 2 || got[0].Code != autoscaler.ReasonMinInstances ||
		got[0].Reason != "scale 0→2: min_instances 2 in scale window mornings" {
		t.Fatalf("got %s", show(got))
	}
}
