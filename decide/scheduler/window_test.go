package scheduler_test

import (
	"testing"

	"github.com/shoal-ml/shoal/decide/scheduler"
)

// A scale window of max_instances 0 makes every queued job wait with the
// window's code and sentence (MaxInstances 0 means "none", not
// "unknown"), while a window of max 2 lets a one-node job wait for a busy
// node with the window's reason and holds back no smaller job behind a
// bigger one.
func TestScaleWindowReasons(t *testing.T) {
	const nights = "max_instances is 0 in scale window nights until 07:00 (UTC)"
	res := scheduler.Schedule(scheduler.Snapshot{
		Jobs:     []scheduler.Job{job("a", "c", 0, 1, 1), job("b", "c", 0, 2, 3)},
		Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 0, Window: nights}},
	})
	for _, id := range []string{"a", "b"} {
		if r := res.Waiting[id]; r.Code() != scheduler.ReasonScaleWindow || r.Message() != nights {
			t.Fatalf("job %s: %+v, want the window's reason", id, r)
		}
	}

	const narrow = "max_instances is 2 in scale window day until 20:00 (UTC)"
	res = scheduler.Schedule(scheduler.Snapshot{
		Nodes:    []scheduler.Node{busy("n0", "c"), busy("n1", "c")},
		Jobs:     []scheduler.Job{job("big", "c", 0, 1, 4), job("small", "c", 0, 2, 1)},
		Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 2, Busy: 2, Window: narrow}},
	})
	if r := res.Waiting["big"]; r.Code() != scheduler.ReasonScaleWindow {
		t.Fatalf("big: %+v", r)
	}
	if r := res.Waiting["small"]; r.Code() != scheduler.ReasonScaleWindow || r.Message() != narrow {
		t.Fatalf("small (busy nodes, window at max): %+v", r)
	}
}
