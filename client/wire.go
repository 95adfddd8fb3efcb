package client

import "github.com/shoal-ml/shoal/domain/identity"

// The bodies below are the native API's own requests and answers (the
// domain types travel as the root package defines them): the server in
// api/ decodes and writes these very types, so the two cannot drift.

// TokenCreateRequest asks for a new API token.
type TokenCreateRequest struct {
	Name string `json:"name"`
	// ExpiresIn is a duration such as "720h"; "" never expires.
	ExpiresIn string `json:"expires_in,omitempty"`
}

// TokenCreateResponse carries the token itself, shown this once.
type TokenCreateResponse struct {
	*identity.APIToken
	Token string `json:"token"`
}

// AssignmentRequest names a principal ("user:alice", "identity:trainer")
// and a role.
type AssignmentRequest struct {
	Principal string `json:"principal"`
	Role      string `json:"role"`
}

// IdentityCreateRequest names a new user-assigned identity.
type IdentityCreateRequest struct {
	Name string `json:"name"`
}

// SPCreateRequest names a new service principal.
type SPCreateRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SPCredentials is a service principal with its secret, answered once,
// when it is created or given a new secret: what AZURE_CLIENT_ID,
// AZURE_CLIENT_SECRET, AZURE_TENANT_ID and AZURE_AUTHORITY_HOST take.
type SPCredentials struct {
	*identity.ServicePrincipal
	ClientSecret string `json:"client_secret"`
	// TenantID is "adfs": Azure's identity libraries skip Microsoft's
	// instance discovery for it (see oauthRoutes in api/).
	TenantID      string `json:"tenant_id"`
	AuthorityHost string `json:"authority_host"`
}

// QuotaSetRequest is the body of PUT …/quotas/{family}.
type QuotaSetRequest struct {
	Limit *int `json:"limit"`
}

// WorkspaceLimitsUpdate is the body of PATCH .../limits: a field left out
// is unchanged, 0 restores the default.
type WorkspaceLimitsUpdate struct {
	MaxLogBytes       *int64 `json:"max_log_bytes,omitempty"`
	StorageQuotaBytes *int64 `json:"storage_quota_bytes,omitempty"`
}

// listBody is the envelope of every list answer, as Azure's.
type listBody[T any] struct {
	Value []T `json:"value"`
}
