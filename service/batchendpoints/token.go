package batchendpoints

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/store"
)

// An invoke token is an ordinary API token of its creator with a scope
// (identity.InvokeScope): it authenticates as the creator, whose roles
// are still checked, but the API's authorization lets it do nothing but
// invoke that one endpoint. It is listed and revoked with the creator's
// other tokens (shoal token list / revoke).

// CreateInvokeToken makes a token that may only invoke workspace's
// endpoint name, acting as the caller, and returns it with its one
// showing of the secret. expiresIn 0 never expires; a token never
// outlives the credential that made it.
func (s *Service) CreateInvokeToken(ctx context.Context, workspace, name string, expiresIn time.Duration) (*identity.APIToken, string, error) {
	p := identity.PrincipalFrom(ctx)
	switch {
	case p == nil:
		return nil, "", core.Errorf(core.EUNAUTHORIZED, "authentication required")
	case p.Scope != "":
		return nil, "", core.Errorf(core.EFORBIDDEN, "an invoke token may not make tokens")
	case p.AttemptID != "" || (p.Kind != identity.PrincipalUser && !p.Admin):
		return nil, "", core.Errorf(core.EFORBIDDEN, "%s may not make invoke tokens: only users do (a token acts as the user who made it)", p.Name)
	}
	if expiresIn < 0 || expiresIn > access.MaxTokenLifetime {
		return nil, "", core.FieldErrorf("expires_in", "must be between 0 (never) and %d days", int(access.MaxTokenLifetime.Hours()/24))
	}
	var (
		tok   *identity.APIToken
		plain string
	)
	err := s.cfg.Store.Update(ctx, func(tx store.Tx) error {
		ep, err := getEndpoint(tx, workspace, name)
		if err != nil {
			return err
		}
		t, hash, err := identity.NewToken()
		if err != nil {
			return err
		}
		tok = &identity.APIToken{ID: core.NewID(rand.Reader, "tok-"), Name: "invoke " + ep.Workspace + "/" + ep.Name, PrincipalID: p.ID, Hash: hash,
			CreatedOn: tx.Now(), Scope: identity.InvokeScope(ep.Workspace, ep.Name)}
		if expiresIn > 0 {
			exp := tx.Now().Add(expiresIn)
			tok.ExpiresOn = &exp
		}
		if p.ExpiresOn != nil && (tok.ExpiresOn == nil || tok.ExpiresOn.After(*p.ExpiresOn)) {
			return core.FieldErrorf("expires_in", "the token would outlive the one this request is made with (it expires %s): ask for a shorter life", p.ExpiresOn.Format(time.RFC3339))
		}
		plain = t
		identity.SetAuditDetail(ctx, "invoke token %s for %s, scoped to %s", tok.ID, p.ID, tok.Scope)
		return tx.InsertToken(tok)
	})
	if err != nil {
		return nil, "", err
	}
	return tok, plain, nil
}
