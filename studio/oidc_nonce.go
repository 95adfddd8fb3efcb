package studio

import (
	"context"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/server/oidcauth"
)

// nonceVerifier is the provider's verifier bound to one sign-in's nonce.
type nonceVerifier struct {
	p     *oidcauth.Provider
	nonce string
}

// Verify implements shoal.OIDCVerifier.
func (v nonceVerifier) Verify(ctx context.Context, raw string) (*identity.OIDCClaims, error) {
	return v.p.VerifyNonce(ctx, raw, v.nonce)
}
