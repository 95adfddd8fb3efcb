package storetest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func viewGen(t *testing.T, s store.Store) node.ViewGen {
	t.Helper()
	var g node.ViewGen
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		g, err = tx.ViewGeneration()
		return err
	})
	return g
}

func changedSince(t *testing.T, s store.Store, gen int64) (map[string]int64, map[string]int64) {
	t.Helper()
	changed, deleted := map[string]int64{}, map[string]int64{}
	stcheck.View(t, s, func(tx store.Tx) error {
		ch, del, err := tx.ListNodesChangedSince(gen)
		for _, c := range ch {
			changed[c.Node.ID] = c.Gen
		}
		for _, d := range del {
			deleted[d.ID] = d.Gen
		}
		return err
	})
	return changed, deleted
}

// testViewGeneration: a transaction that writes nodes raises the
// generation once and stamps its nodes with it; a heartbeat (a lease
// renewal) does not; a deletion is listed by its generation until pruned;
// a compute's write also moves Computes.
func testViewGeneration(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	g0 := viewGen(t, s)
	insertNodes(t, s, minimalNode("ws", "c", "n1", at), minimalNode("ws", "c", "n2", at))
	g1 := viewGen(t, s)
	if g1.Gen != g0.Gen+1 {
		t.Fatalf("one transaction inserting two nodes: generation %d → %d, want +1", g0.Gen, g1.Gen)
	}
	if g1.Computes != g0.Computes {
		t.Errorf("node writes moved Computes %d → %d", g0.Computes, g1.Computes)
	}
	changed, deleted := changedSince(t, s, g0.Gen)
	stcheck.Equal(t, "changed since before the insert", changed, map[string]int64{"n1": g1.Gen, "n2": g1.Gen})
	stcheck.Equal(t, "deleted since before the insert", deleted, map[string]int64{})
	if changed, _ := changedSince(t, s, g1.Gen); len(changed) != 0 {
		t.Errorf("changed since the insert's generation: %v, want none", changed)
	}
	all, _ := changedSince(t, s, -1)
	stcheck.Equal(t, "every node (since -1)", all, map[string]int64{"n1": g1.Gen, "n2": g1.Gen})

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.RenewNodeLeases([]string{"n1"}) })
	if g := viewGen(t, s); g.Gen != g1.Gen {
		t.Errorf("a lease renewal moved the generation %d → %d", g1.Gen, g.Gen)
	}

	stcheck.Update(t, s, func(tx store.Tx) error {
		n, err := tx.GetNode("n2")
		if err != nil {
			return err
		}
		n.State = node.NodeIdle
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		return tx.DeleteNode("n1")
	})
	g2 := viewGen(t, s)
	if g2.Gen != g1.Gen+1 {
		t.Fatalf("update and delete in one transaction: generation %d → %d, want +1", g1.Gen, g2.Gen)
	}
	changed, deleted = changedSince(t, s, g1.Gen)
	stcheck.Equal(t, "changed since the insert", changed, map[string]int64{"n2": g2.Gen})
	stcheck.Equal(t, "deleted since the insert", deleted, map[string]int64{"n1": g2.Gen})

	// A write that fails leaves the generation as it was.
	var failed = core.Errorf(core.EINVALID, "rolled back")
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.InsertNode(minimalNode("ws", "c", "n3", at)); err != nil {
			return err
		}
		return failed
	}); err != failed {
		t.Fatalf("Update: %v, want the function's error", err)
	}
	if g := viewGen(t, s); g.Gen != g2.Gen {
		t.Errorf("a rolled-back insert moved the generation %d → %d", g2.Gen, g.Gen)
	}

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.PruneNodeDeletions(g2.Gen) })
	g3 := viewGen(t, s)
	if g3.Floor != g2.Gen {
		t.Errorf("floor after pruning to %d: %d", g2.Gen, g3.Floor)
	}
	if _, deleted := changedSince(t, s, g1.Gen); len(deleted) != 0 {
		t.Errorf("deletions after pruning: %v, want none", deleted)
	}

	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.InsertCompute(minimalCompute("ws", "c2", compute.ComputeTypeCluster, at))
	})
	if g := viewGen(t, s); g.Gen != g3.Gen+1 || g.Computes != g.Gen {
		t.Errorf("after a compute's insert: %+v, want Gen %d and Computes the same", g, g3.Gen+1)
	}
}
