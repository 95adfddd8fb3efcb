package access

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// OIDCSessionLifetime is how long a token from an OIDC sign-in lasts.
const OIDCSessionLifetime = 12 * time.Hour

// oidcTokenName names the tokens OIDC sign-ins make.
const oidcTokenName = "oidc sign-in"

// LoginOIDC exchanges a verified ID token for a short-lived API token of
// the user linked to the token's issuer and subject (the key: an email
// address alone never identifies a user, and is used only when the
// provider marked it verified with exactly true).
func (s *Service) LoginOIDC(ctx context.Context, v identity.OIDCVerifier, rawIDToken string) (*identity.User, string, error) {
	if v == nil {
		return nil, "", core.Errorf(core.ENOTIMPLEMENTED, "OIDC sign-in is not configured on this server")
	}
	c, err := v.Verify(ctx, rawIDToken)
	if err != nil {
		return nil, "", core.Errorf(core.EUNAUTHORIZED, "the ID token is not valid")
	}
	if c.Issuer == "" || c.Subject == "" {
		return nil, "", core.Errorf(core.EUNAUTHORIZED, "the ID token has no issuer or subject")
	}
	if c.Email != "" && !c.VerifiedEmail() {
		return nil, "", core.Errorf(core.EUNAUTHORIZED, "the provider has not verified the email %s (email_verified must be true)", c.Email)
	}
	var u *identity.User
	var plain string
	err = s.store.Update(ctx, func(tx store.Tx) error {
		var err error
		u, err = tx.FindUserByOIDC(c.Issuer, c.Subject)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.Errorf(core.EFORBIDDEN, "no Shoal user is linked to this account; an administrator links it with `shoal user create --name NAME --oidc-issuer %s --oidc-subject %s`", c.Issuer, c.Subject)
		} else if err != nil {
			return err
		}
		if u.Disabled {
			return core.Errorf(core.EUNAUTHORIZED, "user %s is disabled", u.Name)
		}
		t, hash, err := identity.NewToken()
		if err != nil {
			return err
		}
		exp := tx.Now().Add(OIDCSessionLifetime)
		plain = t
		return tx.InsertToken(&identity.APIToken{ID: core.NewID(s.cfg.Random, "tok-"), Name: oidcTokenName, PrincipalID: u.PrincipalID(), Hash: hash, CreatedOn: tx.Now(), ExpiresOn: &exp})
	})
	if err != nil {
		return nil, "", err
	}
	return u, plain, nil
}

// EndOIDCSession revokes the token of a studio session that an OIDC
// sign-in made (an API token the user signed in with stays valid: the
// session only held it).
func (s *Service) EndOIDCSession(ctx context.Context, token string) {
	_ = s.store.Update(ctx, func(tx store.Tx) error {
		t, err := tx.FindTokenByHash(identity.HashToken(token))
		if err != nil || t.Name != oidcTokenName || t.Revoked {
			return nil
		}
		t.Revoked = true
		identity.SetAuditDetail(ctx, "signed out: token %s revoked", t.ID)
		return tx.UpdateToken(t)
	})
}
