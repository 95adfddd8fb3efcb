package studio

import (
	"context"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/oidcauth"
)

// nonceVerifier is the provider's verifier bound to one sign-in's nonce.
type nonceVerifier struct {
	p     *oidcauth.Provider
	nonce string
}

// Verify implements shoal.OIDCVerifier.
func (v nonceVerifier) Verify(ctx context.Context, raw string) (*shoal.OIDCClaims, error) {
	return v.p.VerifyNonce(ctx, raw, v.nonce)
}
