package accesstest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

const TestPEM = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n-----END PRIVATE KEY-----\n"

func listSigningKeys(t *testing.T, s store.Store) []*identity.SigningKey {
	t.Helper()
	var keys []*identity.SigningKey
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		keys, err = tx.ListSigningKeys()
		return err
	})
	return keys
}

func testSigningKeys(t *testing.T, s store.Store, clock *stcheck.Clock) {
	if keys := listSigningKeys(t, s); len(keys) != 0 {
		t.Errorf("ListSigningKeys of an empty store = %d keys", len(keys))
	}
	raw := clock.Now() // nanoseconds, CET
	retired := raw.Add(time.Hour)
	t2 := stcheck.Now(clock.Advance(24 * time.Hour))
	k1 := &identity.SigningKey{ID: "kid-b", PrivatePEM: TestPEM + "1", CreatedOn: raw, RetiredOn: &retired}
	k2 := &identity.SigningKey{ID: "kid-a", PrivatePEM: TestPEM + "2", CreatedOn: t2}
	k3 := &identity.SigningKey{ID: "kid-c", PrivatePEM: TestPEM + "3", CreatedOn: t2}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, k := range []*identity.SigningKey{k1, k2, k3} {
			if err := tx.InsertSigningKey(k); err != nil {
				return err
			}
		}
		return nil
	})
	if retired != raw.Add(time.Hour) {
		t.Errorf("InsertSigningKey wrote through its RetiredOn pointer")
	}
	if k1.CreatedOn != stcheck.Now(raw) || k1.RetiredOn == nil || *k1.RetiredOn != stcheck.Now(retired) {
		t.Errorf("InsertSigningKey left times %v, %v; want their stored form", k1.CreatedOn, k1.RetiredOn)
	}
	// Newest first; of keys created together, the greater ID first.
	stcheck.Equal(t, "ListSigningKeys", listSigningKeys(t, s), []*identity.SigningKey{k3, k2, k1})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertSigningKey(&identity.SigningKey{ID: "kid-a", PrivatePEM: "other", CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "InsertSigningKey of an existing ID", err, core.ECONFLICT)

	// Retire k2, unretire k1.
	at := clock.Advance(time.Second)
	r2 := *k2
	r2.RetiredOn = &at
	r1 := *k1
	r1.RetiredOn = nil
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.UpdateSigningKey(&r2); err != nil {
			return err
		}
		return tx.UpdateSigningKey(&r1)
	})
	if r2.RetiredOn == nil || *r2.RetiredOn != stcheck.Now(at) {
		t.Errorf("UpdateSigningKey left RetiredOn %v, want its stored form %v", r2.RetiredOn, stcheck.Now(at))
	}
	stcheck.Equal(t, "ListSigningKeys after UpdateSigningKey", listSigningKeys(t, s), []*identity.SigningKey{k3, &r2, &r1})

	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateSigningKey(&identity.SigningKey{ID: "kid-missing", PrivatePEM: "x", CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "UpdateSigningKey of a missing key", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		k := *k3
		k.ID = "KID-C"
		return tx.UpdateSigningKey(&k)
	})
	stcheck.WantCode(t, "UpdateSigningKey compares IDs exactly", err, core.ENOTFOUND)
}
