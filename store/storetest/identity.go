package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

func getIdentity(t *testing.T, s store.Store, name string) *identity.Identity {
	t.Helper()
	var i *identity.Identity
	view(t, s, func(tx store.Tx) (err error) {
		i, err = tx.GetIdentity(name)
		return err
	})
	return i
}

func testIdentities(t *testing.T, s store.Store, clock *Clock) {
	raw := clock.Now() // nanoseconds, CET
	later := clock.Advance(time.Minute)
	trainer := &identity.Identity{Name: "Trainer", ClientID: "0b6f6f1e-1111-4a4a-9c9c-000000000001", CreatedOn: raw}
	system := &identity.Identity{Name: "Prod/GPU", ClientID: "0b6f6f1e-1111-4a4a-9c9c-000000000002", System: true, CreatedOn: later}
	loader := &identity.Identity{Name: "data-loader", ClientID: "0b6f6f1e-1111-4a4a-9c9c-000000000003", CreatedOn: later}
	update(t, s, func(tx store.Tx) error {
		for _, i := range []*identity.Identity{trainer, system, loader} {
			if err := tx.InsertIdentity(i); err != nil {
				return err
			}
		}
		return nil
	})
	if trainer.CreatedOn != now(raw) {
		t.Errorf("InsertIdentity left CreatedOn %v, want its stored form %v", trainer.CreatedOn, now(raw))
	}
	for _, name := range []string{"Trainer", "trainer", "TRAINER"} {
		equal(t, "GetIdentity("+name+")", getIdentity(t, s, name), trainer)
	}
	equal(t, "GetIdentity(prod/gpu)", getIdentity(t, s, "prod/gpu"), system)

	view(t, s, func(tx store.Tx) error {
		i, err := tx.FindIdentityByClientID(system.ClientID)
		if err != nil {
			t.Errorf("FindIdentityByClientID: %v", err)
		} else {
			equal(t, "FindIdentityByClientID", i, system)
		}
		_, err = tx.FindIdentityByClientID("unknown")
		wantCode(t, "FindIdentityByClientID of an unknown ID", err, core.ENOTFOUND)
		_, err = tx.FindIdentityByClientID("")
		wantCode(t, "FindIdentityByClientID of an empty ID", err, core.ENOTFOUND)
		_, err = tx.GetIdentity("nobody")
		wantCode(t, "GetIdentity of a missing identity", err, core.ENOTFOUND)
		return nil
	})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertIdentity(&identity.Identity{Name: "TRAINER", ClientID: "fresh", CreatedOn: tx.Now()})
	})
	wantCode(t, "InsertIdentity of an existing name", err, core.ECONFLICT)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertIdentity(&identity.Identity{Name: "copycat", ClientID: trainer.ClientID, CreatedOn: tx.Now()})
	})
	wantCode(t, "InsertIdentity of an existing client ID", err, core.ECONFLICT)

	list := func(what string, want ...*identity.Identity) {
		t.Helper()
		var got []*identity.Identity
		view(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListIdentities()
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		equal(t, "ListIdentities "+what, got, want)
	}
	list("", loader, system, trainer)

	update(t, s, func(tx store.Tx) error { return tx.DeleteIdentity("trainer") })
	list("after delete", loader, system)
	view(t, s, func(tx store.Tx) error {
		_, err := tx.GetIdentity("Trainer")
		wantCode(t, "GetIdentity after delete", err, core.ENOTFOUND)
		_, err = tx.FindIdentityByClientID(trainer.ClientID)
		wantCode(t, "FindIdentityByClientID after delete", err, core.ENOTFOUND)
		return nil
	})
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteIdentity("Trainer") })
	wantCode(t, "DeleteIdentity of a deleted identity", err, core.ENOTFOUND)

	// The name and client ID are free again.
	again := &identity.Identity{Name: "trainer", ClientID: trainer.ClientID, CreatedOn: now(later)}
	update(t, s, func(tx store.Tx) error { return tx.InsertIdentity(again) })
	equal(t, "GetIdentity after insert again", getIdentity(t, s, "Trainer"), again)
}
