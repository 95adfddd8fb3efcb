package accesstest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

func testTokens(t *testing.T, s store.Store, clock *stcheck.Clock) {
	t1 := stcheck.Now(clock.Now())
	t2 := stcheck.Now(clock.Advance(time.Second))
	exp := stcheck.Now(t2.Add(30 * 24 * time.Hour))
	tokens := []*identity.APIToken{
		{ID: "tok-b", Name: "laptop", PrincipalID: "user:alice", Hash: identity.HashToken("b"), CreatedOn: t1},
		{ID: "tok-c", Name: "ci", PrincipalID: "user:bob", Hash: identity.HashToken("c"), CreatedOn: t2, ExpiresOn: &exp, Revoked: true},
		{ID: "tok-a", Name: "desktop", PrincipalID: "user:alice", Hash: identity.HashToken("a"), CreatedOn: t1, ExpiresOn: &exp, Scope: identity.InvokeScope("ws", "ep1")},
		{ID: "tok-d", Name: "", PrincipalID: "admin", Hash: identity.HashToken("d"), CreatedOn: t2},
	}
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, tok := range tokens {
			if err := tx.InsertToken(tok); err != nil {
				return err
			}
		}
		return nil
	})
	b, c, a, d := tokens[0], tokens[1], tokens[2], tokens[3]

	for _, tok := range tokens {
		var got *identity.APIToken
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.FindTokenByHash(tok.Hash)
			return err
		})
		stcheck.Equal(t, "FindTokenByHash("+tok.ID+")", got, tok)
	}
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.FindTokenByHash(identity.HashToken("unknown"))
		return err
	})
	stcheck.WantCode(t, "FindTokenByHash of an unknown hash", err, core.ENOTFOUND)

	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertToken(&identity.APIToken{ID: "tok-e", PrincipalID: "user:eve", Hash: a.Hash, CreatedOn: t2})
	})
	if err == nil {
		t.Errorf("InsertToken with a hash that is taken succeeded")
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertToken(&identity.APIToken{ID: "tok-a", PrincipalID: "user:eve", Hash: identity.HashToken("e"), CreatedOn: t2})
	})
	if err == nil {
		t.Errorf("InsertToken with an ID that is taken succeeded")
	}

	list := func(principal string, want ...*identity.APIToken) {
		t.Helper()
		var got []*identity.APIToken
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListTokens(principal)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListTokens("+principal+")", got, want)
	}
	list("", a, b, c, d)
	list("user:alice", a, b)
	list("user:bob", c)
	list("user:nobody")
}

func testTokenUpdate(t *testing.T, s store.Store, clock *stcheck.Clock) {
	raw := clock.Now() // nanoseconds, CET: the store keeps it in stored form
	exp := raw.Add(24 * time.Hour)
	tok := &identity.APIToken{ID: "tok-1", Name: "laptop", PrincipalID: "user:alice", Hash: identity.HashToken("1"), CreatedOn: raw, ExpiresOn: &exp}
	other := &identity.APIToken{ID: "tok-2", Name: "ci", PrincipalID: "user:bob", Hash: identity.HashToken("2"), CreatedOn: raw}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.InsertToken(tok); err != nil {
			return err
		}
		return tx.InsertToken(other)
	})
	get := func(id string) *identity.APIToken {
		t.Helper()
		var got *identity.APIToken
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.GetToken(id)
			return err
		})
		return got
	}
	stcheck.Equal(t, "GetToken(tok-1)", get("tok-1"), tok)
	stcheck.Equal(t, "GetToken(tok-2)", get("tok-2"), other)
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetToken("TOK-1")
		return err
	})
	stcheck.WantCode(t, "GetToken compares IDs exactly", err, core.ENOTFOUND)

	// Revoke, rename and extend.
	later := raw.Add(48 * time.Hour)
	changed := *tok
	changed.Name, changed.Revoked, changed.ExpiresOn = "old laptop", true, &later
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateToken(&changed) })
	if later != raw.Add(48*time.Hour) {
		t.Errorf("UpdateToken wrote through its ExpiresOn pointer")
	}
	if changed.ExpiresOn == nil || *changed.ExpiresOn != stcheck.Now(later) {
		t.Errorf("UpdateToken left ExpiresOn %v, want its stored form %v", changed.ExpiresOn, stcheck.Now(later))
	}
	stcheck.Equal(t, "GetToken after UpdateToken", get("tok-1"), &changed)
	var byHash *identity.APIToken
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		byHash, err = tx.FindTokenByHash(tok.Hash)
		return err
	})
	stcheck.Equal(t, "FindTokenByHash after UpdateToken", byHash, &changed)
	stcheck.Equal(t, "the other token after UpdateToken", get("tok-2"), other)

	// Clear the expiry.
	changed.ExpiresOn = nil
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateToken(&changed) })
	stcheck.Equal(t, "GetToken after clearing ExpiresOn", get("tok-1"), &changed)

	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateToken(&identity.APIToken{ID: "tok-missing", Name: "x", Revoked: true})
	})
	stcheck.WantCode(t, "UpdateToken of a missing token", err, core.ENOTFOUND)
}
