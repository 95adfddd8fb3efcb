package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func testNodeSamples(t *testing.T, s shoal.Store, clock *Clock) {
	t0 := now(clock.Now())
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	sample := func(ws, c string, d time.Duration, running int) *shoal.NodeSample {
		return &shoal.NodeSample{Workspace: ws, Compute: c, Time: at(d), Size: "Standard_DS3_v2", Tier: "dedicated", Running: running, Idle: 1}
	}
	a0, a1, a2 := sample("WS", "Cpu", 0, 1), sample("WS", "Cpu", time.Hour, 2), sample("WS", "Cpu", 2*time.Hour, 0)
	other := sample("ws", "gpu", time.Hour, 5)
	update(t, s, func(tx shoal.Tx) error {
		for _, x := range []*shoal.NodeSample{a0, a1, a2, other} {
			if err := tx.InsertNodeSample(x); err != nil {
				return err
			}
		}
		return nil
	})
	list := func(since time.Duration) []*shoal.NodeSample {
		t.Helper()
		var out []*shoal.NodeSample
		view(t, s, func(tx shoal.Tx) (err error) {
			out, err = tx.ListNodeSamples("ws", "cpu", at(since))
			return err
		})
		return out
	}
	equal(t, "ListNodeSamples from the start", list(0), []*shoal.NodeSample{a0, a1, a2})
	// Since 90 minutes: the sample that held then leads.
	equal(t, "ListNodeSamples since 90m", list(90*time.Minute), []*shoal.NodeSample{a1, a2})
	equal(t, "ListNodeSamples before any", list(-time.Hour), []*shoal.NodeSample{a0, a1, a2})

	// The same time again replaces.
	again := sample("ws", "cpu", 2*time.Hour, 3)
	update(t, s, func(tx shoal.Tx) error { return tx.InsertNodeSample(again) })
	got := list(2 * time.Hour)
	if len(got) != 1 || got[0].Running != 3 {
		t.Errorf("after a second sample at the same time: %+v", got)
	}

	// Pruning keeps each compute's newest sample.
	var n int
	update(t, s, func(tx shoal.Tx) (err error) {
		n, err = tx.DeleteNodeSamplesBefore(at(3 * time.Hour))
		return err
	})
	if n != 2 {
		t.Errorf("DeleteNodeSamplesBefore removed %d, want 2 (cpu's two oldest)", n)
	}
	if got := list(0); len(got) != 1 || got[0].Running != 3 {
		t.Errorf("after pruning: %+v, want cpu's newest sample", got)
	}
	view(t, s, func(tx shoal.Tx) error {
		g, err := tx.ListNodeSamples("ws", "gpu", at(0))
		if err != nil || len(g) != 1 {
			t.Errorf("gpu after pruning: %+v %v", g, err)
		}
		return nil
	})
}
