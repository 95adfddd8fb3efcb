package storetest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
)

func testTokens(t *testing.T, s shoal.Store, clock *Clock) {
	t1 := now(clock.Now())
	t2 := now(clock.Advance(time.Second))
	exp := now(t2.Add(30 * 24 * time.Hour))
	tokens := []*shoal.APIToken{
		{ID: "tok-b", Name: "laptop", PrincipalID: "user:alice", Hash: shoal.HashToken("b"), CreatedOn: t1},
		{ID: "tok-c", Name: "ci", PrincipalID: "user:bob", Hash: shoal.HashToken("c"), CreatedOn: t2, ExpiresOn: &exp, Revoked: true},
		{ID: "tok-a", Name: "desktop", PrincipalID: "user:alice", Hash: shoal.HashToken("a"), CreatedOn: t1, ExpiresOn: &exp},
		{ID: "tok-d", Name: "", PrincipalID: "admin", Hash: shoal.HashToken("d"), CreatedOn: t2},
	}
	update(t, s, func(tx shoal.Tx) error {
		for _, tok := range tokens {
			if err := tx.InsertToken(tok); err != nil {
				return err
			}
		}
		return nil
	})
	b, c, a, d := tokens[0], tokens[1], tokens[2], tokens[3]

	for _, tok := range tokens {
		var got *shoal.APIToken
		view(t, s, func(tx shoal.Tx) (err error) {
			got, err = tx.FindTokenByHash(tok.Hash)
			return err
		})
		equal(t, "FindTokenByHash("+tok.ID+")", got, tok)
	}
	err := s.View(t.Context(), func(tx shoal.Tx) error {
		_, err := tx.FindTokenByHash(shoal.HashToken("unknown"))
		return err
	})
	wantCode(t, "FindTokenByHash of an unknown hash", err, shoal.ENOTFOUND)

	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertToken(&shoal.APIToken{ID: "tok-e", PrincipalID: "user:eve", Hash: a.Hash, CreatedOn: t2})
	})
	if err == nil {
		t.Errorf("InsertToken with a hash that is taken succeeded")
	}
	err = s.Update(t.Context(), func(tx shoal.Tx) error {
		return tx.InsertToken(&shoal.APIToken{ID: "tok-a", PrincipalID: "user:eve", Hash: shoal.HashToken("e"), CreatedOn: t2})
	})
	if err == nil {
		t.Errorf("InsertToken with an ID that is taken succeeded")
	}

	list := func(principal string, want ...*shoal.APIToken) {
		t.Helper()
		var got []*shoal.APIToken
		view(t, s, func(tx shoal.Tx) (err error) {
			got, err = tx.ListTokens(principal)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		equal(t, "ListTokens("+principal+")", got, want)
	}
	list("", a, b, c, d)
	list("user:alice", a, b)
	list("user:bob", c)
	list("user:nobody")
}
