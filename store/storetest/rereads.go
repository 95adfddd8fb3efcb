package storetest

import (
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// A row read again in one transaction reads as the database holds it
// then: the transaction's own inserts, updates and deletes of computes,
// workspaces and limits in between show, and changing what a read
// returned changes nothing read later (the stores may answer repeated
// reads from what the transaction already read: sqlstore.ReadCache).
func testRepeatedReads(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "reread", Location: "local", CreatedOn: at}); err != nil {
			return err
		}
		return tx.InsertCompute(minimalCompute("reread", "c1", compute.ComputeTypeCluster, at))
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		first, err := tx.GetCompute("reread", "c1")
		if err != nil {
			return err
		}
		first.Description = "changed by the caller, not stored"
		again, err := tx.GetCompute("REREAD", "C1")
		if err != nil {
			return err
		}
		if again.Description != "" || again.Version != first.Version {
			t.Errorf("second read = %q version %d: a caller's change to the first read leaked", again.Description, again.Version)
		}
		again.Description = "stored"
		again.Version++
		if err := tx.UpdateCompute(again); err != nil {
			return err
		}
		if got, err := tx.GetCompute("reread", "c1"); err != nil || got.Description != "stored" || got.ETag != again.ETag {
			t.Errorf("read after UpdateCompute = %+v, %v; want the update", got, err)
		}
		if err := tx.DeleteCompute("reread", "c1"); err != nil {
			return err
		}
		_, err = tx.GetCompute("reread", "c1")
		stcheck.WantCode(t, "GetCompute after DeleteCompute in the same transaction", err, core.ENOTFOUND)
		if err := tx.InsertCompute(minimalCompute("reread", "c1", compute.ComputeTypeInstance, at)); err != nil {
			return err
		}
		if got, err := tx.GetCompute("reread", "c1"); err != nil || got.Type != compute.ComputeTypeInstance {
			t.Errorf("read after InsertCompute = %+v, %v; want the new compute", got, err)
		}

		if l, err := tx.GetWorkspaceLimits("reread"); err != nil || l != (money.WorkspaceLimits{}) {
			t.Errorf("limits before any = %+v, %v", l, err)
		}
		want := money.WorkspaceLimits{MaxLogBytes: 42}
		if err := tx.PutWorkspaceLimits("reread", want); err != nil {
			return err
		}
		if l, err := tx.GetWorkspaceLimits("reread"); err != nil || l != want {
			t.Errorf("limits after PutWorkspaceLimits = %+v, %v; want %+v", l, err, want)
		}
		if _, err := tx.GetWorkspace("reread"); err != nil {
			return err
		}
		if err := tx.DeleteWorkspace("reread"); err != nil {
			return err
		}
		_, err = tx.GetWorkspace("reread")
		stcheck.WantCode(t, "GetWorkspace after DeleteWorkspace in the same transaction", err, core.ENOTFOUND)
		if l, err := tx.GetWorkspaceLimits("reread"); err != nil || l != (money.WorkspaceLimits{}) {
			t.Errorf("limits after DeleteWorkspace = %+v, %v; want none", l, err)
		}
		return nil
	})
}

// Updates written at the same time (a store may run them in one database
// transaction, sharing its view generation), one of them failing after
// it wrote a node: the others' nodes show as changed since before, at
// generations the store has reached, and the failed one's node is absent.
func testConcurrentGenerations(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	g0 := viewGen(t, s)
	release := make(chan struct{})
	running := make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- s.Update(t.Context(), func(tx store.Tx) error {
			close(running)
			<-release
			return tx.InsertNode(minimalNode("ws", "c", "held", at))
		})
	}()
	<-running
	failed := errors.New("refused after its write")
	// The failing Update first: the one that raised a shared generation
	// then fails takes the raise back with it, and the next must raise it
	// again.
	ids := []string{"b", "a", "c", "d"}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	// A store that batches says how many wait: each queues behind the
	// held Update in turn, so that they share a transaction, in order.
	waiting, batches := s.(interface{ Waiting() int })
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Update(t.Context(), func(tx store.Tx) error {
				if err := tx.InsertNode(minimalNode("ws", "c", id, at)); err != nil {
					return err
				}
				if id == "b" {
					return failed
				}
				return nil
			})
		}()
		for batches && waiting.Waiting() < i+1 && t.Context().Err() == nil {
			runtime.Gosched()
		}
	}
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if (id == "b") != errors.Is(errs[i], failed) || id != "b" && errs[i] != nil {
			t.Errorf("Update of node %s: %v", id, errs[i])
		}
	}
	g := viewGen(t, s)
	changed, _ := changedSince(t, s, g0.Gen)
	if _, ok := changed["b"]; ok {
		t.Errorf("the failed Update's node is stored: %v", changed)
	}
	for _, id := range []string{"held", "a", "c", "d"} {
		gen, ok := changed[id]
		if !ok || gen <= g0.Gen || gen > g.Gen {
			t.Errorf("node %s: changed %v at generation %d; want a generation in (%d, %d]", id, ok, gen, g0.Gen, g.Gen)
		}
	}
	if later, _ := changedSince(t, s, g.Gen); len(later) != 0 {
		t.Errorf("changed since the store's generation %d: %v, want none", g.Gen, later)
	}
}
