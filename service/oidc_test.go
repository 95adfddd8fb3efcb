package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store/sqlite"
)

type fakeVerifier map[string]*identity.OIDCClaims

func (f fakeVerifier) Verify(ctx context.Context, raw string) (*identity.OIDCClaims, error) {
	if c, ok := f[raw]; ok {
		return c, nil
	}
	return nil, errors.New("bad signature")
}

func TestLoginOIDC(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cat, _ := (&config.Config{}).Catalog(nil)
	svc := service.New(service.Config{Store: store, Catalog: cat})
	admin := identity.WithPrincipal(ctx, &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	if _, err := svc.CreateUser(admin, &identity.User{Name: "alice", OIDCIssuer: "https://idp", OIDCSubject: "123"}); err != nil {
		t.Fatal(err)
	}
	v := fakeVerifier{
		"good":           {Issuer: "https://idp", Subject: "123", Email: "a@x", EmailVerified: true},
		"string-true":    {Issuer: "https://idp", Subject: "123", Email: "a@x", EmailVerified: "true"},
		"unverified":     {Issuer: "https://idp", Subject: "123", Email: "a@x"},
		"other-subject":  {Issuer: "https://idp", Subject: "999", Email: "a@x", EmailVerified: true},
		"other-issuer":   {Issuer: "https://evil", Subject: "123", Email: "a@x", EmailVerified: true},
		"no-email-claim": {Issuer: "https://idp", Subject: "123"},
	}
	u, tok, err := svc.LoginOIDC(ctx, v, "good")
	if err != nil || u.Name != "alice" || tok == "" {
		t.Fatalf("good token: %v %v %q", u, err, tok)
	}
	if p, err := svc.Authenticate(ctx, tok); err != nil || p.ID != "user:alice" {
		t.Fatalf("the sign-in token does not authenticate alice: %v %v", p, err)
	}
	if _, _, err := svc.LoginOIDC(ctx, v, "no-email-claim"); err != nil {
		t.Fatalf("issuer+subject alone identify the user: %v", err)
	}
	for raw, code := range map[string]string{
		"string-true": core.EUNAUTHORIZED, "unverified": core.EUNAUTHORIZED, "forged": core.EUNAUTHORIZED,
		"other-subject": core.EFORBIDDEN, "other-issuer": core.EFORBIDDEN,
	} {
		if _, _, err := svc.LoginOIDC(ctx, v, raw); core.ErrorCode(err) != code {
			t.Errorf("%s: got %v, want %s", raw, err, code)
		}
	}
	if _, _, err := svc.LoginOIDC(ctx, nil, "good"); core.ErrorCode(err) != core.ENOTIMPLEMENTED {
		t.Errorf("no verifier: got %v", err)
	}
}
