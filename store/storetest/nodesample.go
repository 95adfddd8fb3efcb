package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testNodeSamples(t *testing.T, s store.Store, clock *stcheck.Clock) {
	t0 := stcheck.Now(clock.Now())
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	sample := func(ws, c string, d time.Duration, running int) *node.NodeSample {
		return &node.NodeSample{Workspace: ws, Compute: c, Time: at(d), Size: "Standard_DS3_v2", Tier: "dedicated", Running: running, Idle: 1}
	}
	a0, a1, a2 := sample("WS", "Cpu", 0, 1), sample("WS", "Cpu", time.Hour, 2), sample("WS", "Cpu", 2*time.Hour, 0)
	other := sample("ws", "gpu", time.Hour, 5)
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, x := range []*node.NodeSample{a0, a1, a2, other} {
			if err := tx.InsertNodeSample(x); err != nil {
				return err
			}
		}
		return nil
	})
	list := func(since time.Duration) []*node.NodeSample {
		t.Helper()
		var out []*node.NodeSample
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = tx.ListNodeSamples("ws", "cpu", at(since))
			return err
		})
		return out
	}
	stcheck.Equal(t, "ListNodeSamples from the start", list(0), []*node.NodeSample{a0, a1, a2})
	// Since 90 minutes: the sample that held then leads.
	stcheck.Equal(t, "ListNodeSamples since 90m", list(90*time.Minute), []*node.NodeSample{a1, a2})
	stcheck.Equal(t, "ListNodeSamples before any", list(-time.Hour), []*node.NodeSample{a0, a1, a2})

	// The same time again replaces.
	again := sample("ws", "cpu", 2*time.Hour, 3)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.InsertNodeSample(again) })
	got := list(2 * time.Hour)
	if len(got) != 1 || got[0].Running != 3 {
		t.Errorf("after a second sample at the same time: %+v", got)
	}

	// Pruning keeps each compute's newest sample.
	var n int
	stcheck.Update(t, s, func(tx store.Tx) (err error) {
		n, err = tx.DeleteNodeSamplesBefore(at(3 * time.Hour))
		return err
	})
	if n != 2 {
		t.Errorf("DeleteNodeSamplesBefore removed %d, want 2 (cpu's two oldest)", n)
	}
	if got := list(0); len(got) != 1 || got[0].Running != 3 {
		t.Errorf("after pruning: %+v, want cpu's newest sample", got)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		g, err := tx.ListNodeSamples("ws", "gpu", at(0))
		if err != nil || len(g) != 1 {
			t.Errorf("gpu after pruning: %+v %v", g, err)
		}
		return nil
	})
}

// The usage ledger: a node's life starts with InsertNode and ends with
// DeleteNode, and stays listed after the node is gone.
func testNodeUsage(t *testing.T, s store.Store, clock *stcheck.Clock) {
	t0 := stcheck.Now(clock.Now())
	a := fullNode("Prod", "gpu", "node-a", t0)
	insertNodes(t, s, a)
	clock.Advance(time.Hour)
	t1 := stcheck.Now(clock.Now())
	b := minimalNode("prod", "cpu", "node-b", t1)
	insertNodes(t, s, b)
	clock.Advance(30 * time.Minute)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteNode("node-a") })
	released := stcheck.Now(clock.Now())
	list := func(ws string, since, until time.Time) []*node.NodeUsage {
		t.Helper()
		var out []*node.NodeUsage
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			out, err = tx.ListNodeUsage(ws, since, until)
			return err
		})
		return out
	}
	all := list("prod", t0, released.Add(time.Hour))
	if len(all) != 2 || all[0].NodeID != "node-a" || all[0].ReleasedOn == nil || !all[0].ReleasedOn.Equal(released) ||
		all[1].NodeID != "node-b" || all[1].ReleasedOn != nil || all[0].Size != a.Size || all[0].LowPriority != a.LowPriority {
		t.Fatalf("usage %+v", all)
	}
	if d := all[0].Overlap(t0, released.Add(time.Hour)); d != 90*time.Minute {
		t.Errorf("node-a's overlap %s, want 1h30m", d)
	}
	if got := list("prod", released.Add(time.Minute), released.Add(time.Hour)); len(got) != 1 || got[0].NodeID != "node-b" {
		t.Errorf("after node-a's release only node-b: %+v", got)
	}
	if got := list("other", t0, released); len(got) != 0 {
		t.Errorf("another workspace: %+v", got)
	}
	if got := list("", t0.Add(-2*time.Hour), t0.Add(-time.Hour)); len(got) != 0 {
		t.Errorf("before any node: %+v", got)
	}
}
