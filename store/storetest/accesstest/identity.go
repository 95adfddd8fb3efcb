package accesstest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func getIdentity(t *testing.T, s store.Store, name string) *identity.Identity {
	t.Helper()
	var i *identity.Identity
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		i, err = tx.GetIdentity(name)
		return err
	})
	return i
}

func testIdentities(t *testing.T, s store.Store, clock *stcheck.Clock) {
	raw := clock.Now() // nanoseconds, CET
	later := clock.Advance(time.Minute)
	trainer := &identity.Identity{Name: "Trainer", ClientID: "0b6f6f1e-1111-4a4a-9c9c-000000000001", CreatedOn: raw}
	system := &identity.Identity{Name: "Prod/GPU", ClientID: "0b6f6f1e-1111-4a4a-9c9c-000000000002", System: true, CreatedOn: later}
	loader := &identity.Identity{Name: "data-loader", ClientID: "0b6f6f1e-1111-4a4a-9c9c-000000000003", CreatedOn: later}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, i := range []*identity.Identity{trainer, system, loader} {
			if err := tx.InsertIdentity(i); err != nil {
				return err
			}
		}
		return nil
	})
	if trainer.CreatedOn != stcheck.Now(raw) {
		t.Errorf("InsertIdentity left CreatedOn %v, want its stored form %v", trainer.CreatedOn, stcheck.Now(raw))
	}
	for _, name := range []string{"Trainer", "trainer", "TRAINER"} {
		stcheck.Equal(t, "GetIdentity("+name+")", getIdentity(t, s, name), trainer)
	}
	stcheck.Equal(t, "GetIdentity(prod/gpu)", getIdentity(t, s, "prod/gpu"), system)

	stcheck.View(t, s, func(tx store.Tx) error {
		i, err := tx.FindIdentityByClientID(system.ClientID)
		if err != nil {
			t.Errorf("FindIdentityByClientID: %v", err)
		} else {
			stcheck.Equal(t, "FindIdentityByClientID", i, system)
		}
		_, err = tx.FindIdentityByClientID("unknown")
		stcheck.WantCode(t, "FindIdentityByClientID of an unknown ID", err, core.ENOTFOUND)
		_, err = tx.FindIdentityByClientID("")
		stcheck.WantCode(t, "FindIdentityByClientID of an empty ID", err, core.ENOTFOUND)
		_, err = tx.GetIdentity("nobody")
		stcheck.WantCode(t, "GetIdentity of a missing identity", err, core.ENOTFOUND)
		return nil
	})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertIdentity(&identity.Identity{Name: "TRAINER", ClientID: "fresh", CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "InsertIdentity of an existing name", err, core.ECONFLICT)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertIdentity(&identity.Identity{Name: "copycat", ClientID: trainer.ClientID, CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "InsertIdentity of an existing client ID", err, core.ECONFLICT)

	list := func(what string, want ...*identity.Identity) {
		t.Helper()
		var got []*identity.Identity
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListIdentities()
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListIdentities "+what, got, want)
	}
	list("", loader, system, trainer)

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteIdentity("trainer") })
	list("after delete", loader, system)
	stcheck.View(t, s, func(tx store.Tx) error {
		_, err := tx.GetIdentity("Trainer")
		stcheck.WantCode(t, "GetIdentity after delete", err, core.ENOTFOUND)
		_, err = tx.FindIdentityByClientID(trainer.ClientID)
		stcheck.WantCode(t, "FindIdentityByClientID after delete", err, core.ENOTFOUND)
		return nil
	})
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteIdentity("Trainer") })
	stcheck.WantCode(t, "DeleteIdentity of a deleted identity", err, core.ENOTFOUND)

	// The name and client ID are free again.
	again := &identity.Identity{Name: "trainer", ClientID: trainer.ClientID, CreatedOn: stcheck.Now(later)}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.InsertIdentity(again) })
	stcheck.Equal(t, "GetIdentity after insert again", getIdentity(t, s, "Trainer"), again)
}
