package identity

import (
	"crypto/rand"
	"encoding/base64"
	"time"
)

// PrincipalServicePrincipal is the kind of a service principal: an
// application signing in with a client ID and secret, as Azure's
// ClientSecretCredential does.
const PrincipalServicePrincipal = "service_principal"

// ServicePrincipalSecretPrefix starts every service principal secret, so a
// leaked one is recognisable (and never mistaken for an API token).
const ServicePrincipalSecretPrefix = "shoalsp_"

// ServicePrincipal is an application's identity: it has roles like a user
// or a managed identity and gets tokens from Shoal's OAuth 2.0 token
// endpoint with the client-credentials grant. Only the secret's SHA-256
// hash is stored; the secret is shown once, when it is made.
type ServicePrincipal struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// ClientID is the public ID clients send (Azure's appId).
	ClientID   string `json:"client_id"`
	SecretHash string `json:"-"`
	// SecretCreatedOn is when the current secret was made: tokens minted
	// before a reset are refused from then on.
	SecretCreatedOn time.Time `json:"secret_created_on"`
	CreatedOn       time.Time `json:"created_on"`
	CreatedBy       string    `json:"created_by"`
}

// PrincipalID returns the service principal's principal ID.
func (sp *ServicePrincipal) PrincipalID() string { return "sp:" + sp.Name }

// ValidateServicePrincipalName checks a service principal's name.
func ValidateServicePrincipalName(name string) error { return ValidatePrincipalName("name", name) }

// NewServicePrincipalSecret returns a fresh random secret and its hash.
// Secrets carry 256 random bits, so a fast hash is enough (as for tokens).
func NewServicePrincipalSecret() (secret, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	secret = ServicePrincipalSecretPrefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, HashToken(secret), nil
}
