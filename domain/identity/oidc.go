package identity

import "context"

// OIDCClaims are what Shoal reads from a verified OpenID Connect ID token.
type OIDCClaims struct {
	Issuer  string
	Subject string
	Email   string
	// EmailVerified is the email_verified claim as sent: only a claim that
	// is exactly the boolean true counts (not "true", not absent).
	EmailVerified any
}

// VerifiedEmail reports whether the provider vouched for the email.
func (c *OIDCClaims) VerifiedEmail() bool {
	b, ok := c.EmailVerified.(bool)
	return ok && b
}

// OIDCVerifier verifies an ID token from a configured sign-in provider
// (signature, issuer, audience, expiry) and returns its claims. A provider
// adapter (for example one over github.com/coreos/go-oidc) implements it;
// nothing else in Shoal changes when one is added.
type OIDCVerifier interface {
	Verify(ctx context.Context, rawIDToken string) (*OIDCClaims, error)
}
