package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

const issuer = "https://login.example.com/tenant/v2.0"

func getUser(t *testing.T, s store.Store, name string) *identity.User {
	t.Helper()
	var u *identity.User
	view(t, s, func(tx store.Tx) (err error) {
		u, err = tx.GetUser(name)
		return err
	})
	return u
}

func testUsers(t *testing.T, s store.Store, clock *Clock) {
	raw := clock.Now() // nanoseconds, CET
	later := clock.Advance(time.Minute)
	alice := &identity.User{Name: "Alice", Admin: true, CreatedOn: raw, OIDCIssuer: issuer, OIDCSubject: "sub-Alice"}
	bob := &identity.User{Name: "bob", Disabled: true, CreatedOn: later}
	// Users without a sign-in account, or with half of one, do not
	// conflict with each other.
	carol := &identity.User{Name: "carol", CreatedOn: later}
	dave := &identity.User{Name: "Dave_2", CreatedOn: later, OIDCIssuer: issuer}
	erin := &identity.User{Name: "erin.x", CreatedOn: later, OIDCIssuer: issuer}
	frank := &identity.User{Name: "frank", CreatedOn: later, OIDCSubject: "sub-Alice"}
	update(t, s, func(tx store.Tx) error {
		for _, u := range []*identity.User{alice, bob, carol, dave, erin, frank} {
			if err := tx.InsertUser(u); err != nil {
				return err
			}
		}
		return nil
	})
	if alice.CreatedOn != now(raw) {
		t.Errorf("InsertUser left CreatedOn %v, want its stored form %v", alice.CreatedOn, now(raw))
	}
	for _, name := range []string{"Alice", "alice", "ALICE"} {
		equal(t, "GetUser("+name+")", getUser(t, s, name), alice)
	}
	equal(t, "GetUser(bob)", getUser(t, s, "bob"), bob)

	view(t, s, func(tx store.Tx) error {
		_, err := tx.GetUser("nobody")
		wantCode(t, "GetUser of a missing user", err, core.ENOTFOUND)

		u, err := tx.FindUserByOIDC(issuer, "sub-Alice")
		if err != nil {
			t.Errorf("FindUserByOIDC: %v", err)
		} else {
			equal(t, "FindUserByOIDC", u, alice)
		}
		// Issuers and subjects compare exactly; unlinked users match no
		// account, not even an empty one.
		for _, c := range [][2]string{{issuer, "sub-alice"}, {issuer + "/", "sub-Alice"}, {"", ""}, {issuer, ""}, {"", "sub-Alice"}, {"https://other", "sub-Alice"}} {
			_, err := tx.FindUserByOIDC(c[0], c[1])
			wantCode(t, "FindUserByOIDC("+c[0]+", "+c[1]+")", err, core.ENOTFOUND)
		}
		return nil
	})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertUser(&identity.User{Name: "ALICE", CreatedOn: tx.Now()})
	})
	wantCode(t, "InsertUser of an existing name", err, core.ECONFLICT)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertUser(&identity.User{Name: "mallory", CreatedOn: tx.Now(), OIDCIssuer: issuer, OIDCSubject: "sub-Alice"})
	})
	wantCode(t, "InsertUser with a sign-in account that is linked", err, core.ECONFLICT)
	view(t, s, func(tx store.Tx) error {
		_, err := tx.GetUser("mallory")
		wantCode(t, "GetUser after a conflicting InsertUser", err, core.ENOTFOUND)
		return nil
	})

	var users []*identity.User
	view(t, s, func(tx store.Tx) (err error) {
		users, err = tx.ListUsers()
		return err
	})
	equal(t, "ListUsers", users, []*identity.User{alice, bob, carol, dave, erin, frank})

	// Update: link bob, enable him, make him an administrator.
	changed := *bob
	changed.Disabled, changed.Admin = false, true
	changed.OIDCIssuer, changed.OIDCSubject = issuer, "sub-bob"
	update(t, s, func(tx store.Tx) error { return tx.UpdateUser(&changed) })
	equal(t, "GetUser after UpdateUser", getUser(t, s, "BOB"), &changed)
	view(t, s, func(tx store.Tx) error {
		u, err := tx.FindUserByOIDC(issuer, "sub-bob")
		if err != nil {
			t.Errorf("FindUserByOIDC after linking: %v", err)
		} else {
			equal(t, "FindUserByOIDC after linking", u, &changed)
		}
		return nil
	})
	equal(t, "another user after UpdateUser", getUser(t, s, "alice"), alice)

	// Linking a second user to an account is a conflict.
	err = s.Update(t.Context(), func(tx store.Tx) error {
		c := *carol
		c.OIDCIssuer, c.OIDCSubject = issuer, "sub-bob"
		return tx.UpdateUser(&c)
	})
	wantCode(t, "UpdateUser linking an account that is linked", err, core.ECONFLICT)
	equal(t, "user after a conflicting UpdateUser", getUser(t, s, "carol"), carol)

	// Updating a user without changing its link is no conflict.
	a := *alice
	a.Disabled = true
	update(t, s, func(tx store.Tx) error { return tx.UpdateUser(&a) })
	equal(t, "GetUser after disabling", getUser(t, s, "alice"), &a)

	// Once unlinked, the account can be linked to another user.
	a.OIDCIssuer, a.OIDCSubject = "", ""
	c := *carol
	c.OIDCIssuer, c.OIDCSubject = issuer, "sub-Alice"
	update(t, s, func(tx store.Tx) error {
		if err := tx.UpdateUser(&a); err != nil {
			return err
		}
		return tx.UpdateUser(&c)
	})
	view(t, s, func(tx store.Tx) error {
		u, err := tx.FindUserByOIDC(issuer, "sub-Alice")
		if err != nil {
			t.Errorf("FindUserByOIDC after relinking: %v", err)
		} else {
			equal(t, "FindUserByOIDC after relinking", u, &c)
		}
		return nil
	})

	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateUser(&identity.User{Name: "nobody", CreatedOn: tx.Now()})
	})
	wantCode(t, "UpdateUser of a missing user", err, core.ENOTFOUND)
}
