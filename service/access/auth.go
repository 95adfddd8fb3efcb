package access

import (
	"context"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// adminPrincipal is the server's bootstrap administrator.
var adminPrincipal = &identity.Principal{ID: identity.AdminPrincipalID, Name: "admin", Kind: identity.PrincipalAdmin, Admin: true}

// Authenticate returns the principal a bearer token belongs to. Unknown,
// revoked and expired tokens are EUNAUTHORIZED.
func (s *Service) Authenticate(ctx context.Context, token string) (*identity.Principal, error) {
	var p *identity.Principal
	err := s.store.View(ctx, func(tx store.Tx) error {
		t, err := tx.FindTokenByHash(identity.HashToken(token))
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.Errorf(core.EUNAUTHORIZED, "the token is not valid")
		} else if err != nil {
			return err
		}
		// The lookup was by hash; compare again in constant time so the
		// check does not depend on how the index compares strings.
		if !identity.TokenMatches(token, t.Hash) || t.Revoked {
			return core.Errorf(core.EUNAUTHORIZED, "the token is not valid")
		}
		if t.ExpiresOn != nil && !tx.Now().Before(*t.ExpiresOn) {
			return core.Errorf(core.EUNAUTHORIZED, "the token has expired")
		}
		p, err = s.authenticateUserToken(tx, t)
		if err == nil && (t.ExpiresOn != nil || t.Scope != "") {
			// A copy: adminPrincipal is shared.
			c := *p
			if t.ExpiresOn != nil {
				exp := *t.ExpiresOn
				c.ExpiresOn = &exp
			}
			// A scoped token is never an administrator's whole power.
			c.Scope = t.Scope
			p = &c
		}
		return err
	})
	return p, err
}

// settingAdminTokenID records that the bootstrap admin token was made.
const settingAdminTokenID = "admin_token_id"

// BootstrapAdminToken makes, on the first start only, an admin API token.
// It returns the new token, or "" when one was made before (the token
// itself is never stored, only its hash).
func (s *Service) BootstrapAdminToken(ctx context.Context) (string, error) {
	var token string
	err := s.store.Update(ctx, func(tx store.Tx) error {
		token = "" // a run again may find another server's token made
		if _, err := tx.GetSetting(settingAdminTokenID); err == nil {
			return nil
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		tok, hash, err := identity.NewToken()
		if err != nil {
			return err
		}
		id := "tok-admin-" + hash[:12]
		if err := tx.InsertToken(&identity.APIToken{ID: id, Name: "bootstrap admin", PrincipalID: adminPrincipal.ID, Hash: hash, CreatedOn: tx.Now()}); err != nil {
			return err
		}
		token = tok
		return tx.PutSetting(settingAdminTokenID, id)
	})
	return token, err
}
