package accesstest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

const Issuer = "https://login.example.com/tenant/v2.0"

func getUser(t *testing.T, s store.Store, name string) *identity.User {
	t.Helper()
	var u *identity.User
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		u, err = tx.GetUser(name)
		return err
	})
	return u
}

func testUsers(t *testing.T, s store.Store, clock *stcheck.Clock) {
	raw := clock.Now() // nanoseconds, CET
	later := clock.Advance(time.Minute)
	alice := &identity.User{Name: "Alice", Admin: true, CreatedOn: raw, OIDCIssuer: Issuer, OIDCSubject: "sub-Alice"}
	bob := &identity.User{Name: "bob", Disabled: true, CreatedOn: later}
	// Users without a sign-in account, or with half of one, do not
	// conflict with each other.
	carol := &identity.User{Name: "carol", CreatedOn: later}
	dave := &identity.User{Name: "Dave_2", CreatedOn: later, OIDCIssuer: Issuer}
	erin := &identity.User{Name: "erin.x", CreatedOn: later, OIDCIssuer: Issuer}
	frank := &identity.User{Name: "frank", CreatedOn: later, OIDCSubject: "sub-Alice"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, u := range []*identity.User{alice, bob, carol, dave, erin, frank} {
			if err := tx.InsertUser(u); err != nil {
				return err
			}
		}
		return nil
	})
	if alice.CreatedOn != stcheck.Now(raw) {
		t.Errorf("InsertUser left CreatedOn %v, want its stored form %v", alice.CreatedOn, stcheck.Now(raw))
	}
	for _, name := range []string{"Alice", "alice", "ALICE"} {
		stcheck.Equal(t, "GetUser("+name+")", getUser(t, s, name), alice)
	}
	stcheck.Equal(t, "GetUser(bob)", getUser(t, s, "bob"), bob)

	stcheck.View(t, s, func(tx store.Tx) error {
		_, err := tx.GetUser("nobody")
		stcheck.WantCode(t, "GetUser of a missing user", err, core.ENOTFOUND)

		u, err := tx.FindUserByOIDC(Issuer, "sub-Alice")
		if err != nil {
			t.Errorf("FindUserByOIDC: %v", err)
		} else {
			stcheck.Equal(t, "FindUserByOIDC", u, alice)
		}
		// Issuers and subjects compare exactly; unlinked users match no
		// account, not even an empty one.
		for _, c := range [][2]string{{Issuer, "sub-alice"}, {Issuer + "/", "sub-Alice"}, {"", ""}, {Issuer, ""}, {"", "sub-Alice"}, {"https://other", "sub-Alice"}} {
			_, err := tx.FindUserByOIDC(c[0], c[1])
			stcheck.WantCode(t, "FindUserByOIDC("+c[0]+", "+c[1]+")", err, core.ENOTFOUND)
		}
		return nil
	})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertUser(&identity.User{Name: "ALICE", CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "InsertUser of an existing name", err, core.ECONFLICT)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertUser(&identity.User{Name: "mallory", CreatedOn: tx.Now(), OIDCIssuer: Issuer, OIDCSubject: "sub-Alice"})
	})
	stcheck.WantCode(t, "InsertUser with a sign-in account that is linked", err, core.ECONFLICT)
	stcheck.View(t, s, func(tx store.Tx) error {
		_, err := tx.GetUser("mallory")
		stcheck.WantCode(t, "GetUser after a conflicting InsertUser", err, core.ENOTFOUND)
		return nil
	})

	var users []*identity.User
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		users, err = tx.ListUsers()
		return err
	})
	stcheck.Equal(t, "ListUsers", users, []*identity.User{alice, bob, carol, dave, erin, frank})

	// Update: link bob, enable him, make him an administrator.
	changed := *bob
	changed.Disabled, changed.Admin = false, true
	changed.OIDCIssuer, changed.OIDCSubject = Issuer, "sub-bob"
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateUser(&changed) })
	stcheck.Equal(t, "GetUser after UpdateUser", getUser(t, s, "BOB"), &changed)
	stcheck.View(t, s, func(tx store.Tx) error {
		u, err := tx.FindUserByOIDC(Issuer, "sub-bob")
		if err != nil {
			t.Errorf("FindUserByOIDC after linking: %v", err)
		} else {
			stcheck.Equal(t, "FindUserByOIDC after linking", u, &changed)
		}
		return nil
	})
	stcheck.Equal(t, "another user after UpdateUser", getUser(t, s, "alice"), alice)

	// Linking a second user to an account is a conflict.
	err = s.Update(t.Context(), func(tx store.Tx) error {
		c := *carol
		c.OIDCIssuer, c.OIDCSubject = Issuer, "sub-bob"
		return tx.UpdateUser(&c)
	})
	stcheck.WantCode(t, "UpdateUser linking an account that is linked", err, core.ECONFLICT)
	stcheck.Equal(t, "user after a conflicting UpdateUser", getUser(t, s, "carol"), carol)

	// Updating a user without changing its link is no conflict.
	a := *alice
	a.Disabled = true
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateUser(&a) })
	stcheck.Equal(t, "GetUser after disabling", getUser(t, s, "alice"), &a)

	// Once unlinked, the account can be linked to another user.
	a.OIDCIssuer, a.OIDCSubject = "", ""
	c := *carol
	c.OIDCIssuer, c.OIDCSubject = Issuer, "sub-Alice"
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.UpdateUser(&a); err != nil {
			return err
		}
		return tx.UpdateUser(&c)
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		u, err := tx.FindUserByOIDC(Issuer, "sub-Alice")
		if err != nil {
			t.Errorf("FindUserByOIDC after relinking: %v", err)
		} else {
			stcheck.Equal(t, "FindUserByOIDC after relinking", u, &c)
		}
		return nil
	})

	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateUser(&identity.User{Name: "nobody", CreatedOn: tx.Now()})
	})
	stcheck.WantCode(t, "UpdateUser of a missing user", err, core.ENOTFOUND)
}
