package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

const issuer = "https://login.example.com/tenant/v2.0"

func getUser(t *testing.T, s shoal.Store, name string) *shoal.User {
	t.Helper()
	var u *shoal.User
	view(t, s, func(tx shoal.Tx) (err error) {
		u, err = tx.GetUser(name)
		return err
	})
	return u
}

func testUsers(t *testing.T, s shoal.Store, clock *Clock) {
	raw := clock.Now() // nanoseconds, CET
	later := clock.Advance(time.Minute)
	alice := &shoal.User{Name: "Alice", Admin: true, CreatedOn: raw, OIDCIssuer: issuer, OIDCSubject: "sub-Alice"}
	bob := &shoal.User{Name: "bob", Disabled: true, CreatedOn: later}
	// Users without a sign-in account, or with half of one, do not
	// conflict with each other.
	carol := &shoal.User{Name: "carol", CreatedOn: later}
	dave := &shoal.User{Name: "Dave_2", CreatedOn: later, OIDCIssuer: issuer}
	erin := &shoal.User{Name: "erin.x", CreatedOn: later, OIDCIssuer: issuer}
	frank := &shoal.User{Name: "frank", CreatedOn: later, OIDCSubject: "sub-Alice"}
	update(t, s, func(tx shoal.Tx) error {
		for _, u := range []*shoal.User{alice, bob, carol, dave, erin, frank} {
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

	view(t, s, func(tx shoal.Tx) error {
		_, err := tx.GetUser("nobody")
		wantCode(t, "GetUser of a missing user", err, shoal.ENOTFOUND)

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
			wantCode(t, "FindUserByOIDC("+c[0]+", "+c[1]+")", err, shoal.ENOTFOUND)
		}
		return nil
	})

	err := s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertUser(&shoal.User{Name: "ALICE", CreatedOn: tx.Now()})
	})
	wantCode(t, "InsertUser of an existing name", err, shoal.ECONFLICT)
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertUser(&shoal.User{Name: "mallory", CreatedOn: tx.Now(), OIDCIssuer: issuer, OIDCSubject: "sub-Alice"})
	})
	wantCode(t, "InsertUser with a sign-in account that is linked", err, shoal.ECONFLICT)
	view(t, s, func(tx shoal.Tx) error {
		_, err := tx.GetUser("mallory")
		wantCode(t, "GetUser after a conflicting InsertUser", err, shoal.ENOTFOUND)
		return nil
	})

	var users []*shoal.User
	view(t, s, func(tx shoal.Tx) (err error) {
		users, err = tx.ListUsers()
		return err
	})
	equal(t, "ListUsers", users, []*shoal.User{alice, bob, carol, dave, erin, frank})

	// Update: link bob, enable him, make him an administrator.
	changed := *bob
	changed.Disabled, changed.Admin = false, true
	changed.OIDCIssuer, changed.OIDCSubject = issuer, "sub-bob"
	update(t, s, func(tx shoal.Tx) error { return tx.UpdateUser(&changed) })
	equal(t, "GetUser after UpdateUser", getUser(t, s, "BOB"), &changed)
	view(t, s, func(tx shoal.Tx) error {
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
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		c := *carol
		c.OIDCIssuer, c.OIDCSubject = issuer, "sub-bob"
		return tx.UpdateUser(&c)
	})
	wantCode(t, "UpdateUser linking an account that is linked", err, shoal.ECONFLICT)
	equal(t, "user after a conflicting UpdateUser", getUser(t, s, "carol"), carol)

	// Updating a user without changing its link is no conflict.
	a := *alice
	a.Disabled = true
	update(t, s, func(tx shoal.Tx) error { return tx.UpdateUser(&a) })
	equal(t, "GetUser after disabling", getUser(t, s, "alice"), &a)

	// Once unlinked, the account can be linked to another user.
	a.OIDCIssuer, a.OIDCSubject = "", ""
	c := *carol
	c.OIDCIssuer, c.OIDCSubject = issuer, "sub-Alice"
	update(t, s, func(tx shoal.Tx) error {
		if err := tx.UpdateUser(&a); err != nil {
			return err
		}
		return tx.UpdateUser(&c)
	})
	view(t, s, func(tx shoal.Tx) error {
		u, err := tx.FindUserByOIDC(issuer, "sub-Alice")
		if err != nil {
			t.Errorf("FindUserByOIDC after relinking: %v", err)
		} else {
			equal(t, "FindUserByOIDC after relinking", u, &c)
		}
		return nil
	})

	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.UpdateUser(&shoal.User{Name: "nobody", CreatedOn: tx.Now()})
	})
	wantCode(t, "UpdateUser of a missing user", err, shoal.ENOTFOUND)
}
