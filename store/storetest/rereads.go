package storetest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
)

// A row read again in one transaction reads as the database holds it
// then: the transaction's own inserts, updates and deletes of computes,
// workspaces and limits in between show, and changing what a read
// returned changes nothing read later (the stores may answer repeated
// reads from what the transaction already read: sqlstore.ReadCache).
func testRepeatedReads(t *testing.T, s store.Store, clock *Clock) {
	at := now(clock.Now())
	update(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "reread", Location: "local", CreatedOn: at}); err != nil {
			return err
		}
		return tx.InsertCompute(minimalCompute("reread", "c1", compute.ComputeTypeCluster, at))
	})
	update(t, s, func(tx store.Tx) error {
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
		wantCode(t, "GetCompute after DeleteCompute in the same transaction", err, core.ENOTFOUND)
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
		wantCode(t, "GetWorkspace after DeleteWorkspace in the same transaction", err, core.ENOTFOUND)
		if l, err := tx.GetWorkspaceLimits("reread"); err != nil || l != (money.WorkspaceLimits{}) {
			t.Errorf("limits after DeleteWorkspace = %+v, %v; want none", l, err)
		}
		return nil
	})
}
