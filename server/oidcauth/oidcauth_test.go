package oidcauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testoidc"
	"github.com/shoal-ml/shoal/server/oidcauth"
)

// The adapter verifies ID tokens from a real (in-process) provider: its
// keys, issuer, audience, expiry and the sign-in's nonce.
func TestVerify(t *testing.T) {
	idp := testoidc.Start(t, "shoal-studio", "s3cret")
	ctx := context.Background()
	p, err := oidcauth.New(ctx, oidcauth.Config{Issuer: idp.URL, ClientID: "shoal-studio", ClientSecret: "s3cret", RedirectURL: "http://shoal.test/signin/oidc/callback"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Verify(ctx, idp.IDToken("alice-sub", "shoal-studio", "n1", time.Now().Add(time.Hour)))
	if err != nil || c.Subject != "alice-sub" || c.Issuer != idp.URL {
		t.Fatalf("a good token: %+v %v", c, err)
	}
	if _, err := p.VerifyNonce(ctx, idp.IDToken("alice-sub", "shoal-studio", "n1", time.Now().Add(time.Hour)), "n2"); err == nil || !strings.Contains(err.Error(), "nonce") {
		t.Errorf("another sign-in's nonce: %v", err)
	}
	for what, tok := range map[string]string{
		"another client's token": idp.IDToken("alice-sub", "other-client", "", time.Now().Add(time.Hour)),
		"an expired token":       idp.IDToken("alice-sub", "shoal-studio", "", time.Now().Add(-time.Hour)),
		"a forged token":         idp.IDToken("alice-sub", "shoal-studio", "", time.Now().Add(time.Hour))[:40] + "x.y.z",
	} {
		if _, err := p.Verify(ctx, tok); err == nil {
			t.Errorf("%s verified", what)
		}
	}
	if u := p.AuthCodeURL("st", "no", "verifier-verifier-verifier-verifier-verifier"); !strings.HasPrefix(u, idp.URL+"/authorize?") || !strings.Contains(u, "code_challenge_method=S256") || !strings.Contains(u, "nonce=no") {
		t.Errorf("AuthCodeURL %s", u)
	}
	if _, err := oidcauth.New(ctx, oidcauth.Config{Issuer: "http://127.0.0.1:1", ClientID: "x"}); err == nil {
		t.Error("discovery of an unreachable issuer succeeded")
	}
}
