package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Principal kinds.
const (
	PrincipalAdmin = "admin" // the server's bootstrap administrator
	PrincipalUser  = "user"
	PrincipalNode  = "node"
	// PrincipalSystem is the server acting on its own: the control loops
	// (scheduler, autoscaler, lifecycle). Its requests are not audited and
	// its changes are recorded under the loop's name (SystemPrincipal).
	PrincipalSystem = "system"
)

// systemPrincipalID is the ID every system principal shares.
const systemPrincipalID = "system"

// SystemPrincipal returns the server's own principal acting as name (the
// loop that acts, "scheduler" or "autoscaler", or "system"), which events
// show as their actor.
func SystemPrincipal(name string) *Principal {
	return &Principal{ID: systemPrincipalID, Name: name, Kind: PrincipalSystem}
}

// Principal is who makes a request.
type Principal struct {
	// ID is unique, e.g. "admin" or "user:alice".
	ID string `json:"id"`
	// Name is what events and the audit log show.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Admin principals may do everything, everywhere.
	Admin bool `json:"admin"`
	// OnBehalfOf is, for a workload identity, the principal that submitted
	// the job: the workload never gets more rights than its submitter.
	OnBehalfOf string `json:"on_behalf_of,omitempty"`
	// AttemptID binds a workload identity to the job attempt it runs in.
	AttemptID string `json:"attempt_id,omitempty"`
	// Workspace binds a job's user identity (a job acting as its
	// submitter) to its job's workspace: it acts nowhere else.
	Workspace string `json:"workspace,omitempty"`
	// ExpiresOn is when the API token the request was made with expires,
	// nil when it never does: a token may not mint one that outlives it.
	ExpiresOn *time.Time `json:"expires_on,omitempty"`
	// Scope is the scope of the API token the request was made with
	// (APIToken.Scope): when set, the request may only invoke that batch
	// endpoint (ScopeAllows), whatever the principal's roles grant.
	Scope string `json:"scope,omitempty"`
}

// InvokeScope is the scope of a token that may only invoke workspace
// ws's batch endpoint name (names compare case-insensitively).
func InvokeScope(ws, name string) string {
	return strings.ToLower("workspaces/" + ws + "/batchEndpoints/" + name)
}

// ScopeAllows reports whether p's token scope lets it do action in
// workspace ws on the route's resource name: always for an unscoped
// token; for an invoke token, only invoking its own endpoint. Roles are
// checked besides: a scope never grants what the principal lacks.
func (p *Principal) ScopeAllows(action, ws, name string) bool {
	if p == nil || p.Scope == "" {
		return true
	}
	return action == ActBatchEndpointsInvoke && ws != "" && name != "" && p.Scope == InvokeScope(ws, name)
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// ActorName returns the name to record as the actor of a change made in ctx.
func ActorName(ctx context.Context) string {
	if p := PrincipalFrom(ctx); p != nil {
		return p.Name
	}
	return "system"
}

// TokenPrefix starts every Shoal API token so that secret scanners and
// redaction can recognise them.
const TokenPrefix = "shoal_"

// APIToken is a stored API token. Only its SHA-256 hash is kept: the token
// itself is shown once, when it is created.
type APIToken struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	PrincipalID string     `json:"principal_id"`
	Hash        string     `json:"-"`
	CreatedOn   time.Time  `json:"created_on"`
	ExpiresOn   *time.Time `json:"expires_on,omitempty"`
	Revoked     bool       `json:"revoked"`
	// Scope, when set, narrows the token to one thing its principal may
	// do: InvokeScope's batch endpoint (invoking it, nothing else).
	Scope string `json:"scope,omitempty"`
}

// NewToken returns a fresh random API token and its hash.
func NewToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken returns the hex SHA-256 of a token, the form tokens are stored in.
// Tokens carry 256 random bits, so a fast hash is enough.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return hex.EncodeToString(sum[:])
}

// TokenMatches compares a presented token with a stored hash in constant time.
func TokenMatches(token, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(hash)) == 1
}

// AdminPrincipalID is the ID of the server's bootstrap administrator.
const AdminPrincipalID = "admin"

// RequireAdmin refuses a caller that is not an administrator; what names
// the request in the refusal ("creating users").
func RequireAdmin(ctx context.Context, what string) error {
	p := PrincipalFrom(ctx)
	if p == nil || !p.Admin {
		return core.Errorf(core.EFORBIDDEN, "%s needs an administrator", what)
	}
	return nil
}

// ActingPrincipalID is the ID of the principal a request acts for: its
// caller, or the submitter a workload acts on behalf of.
func ActingPrincipalID(ctx context.Context) string {
	p := PrincipalFrom(ctx)
	switch {
	case p == nil:
		return ""
	case p.OnBehalfOf != "":
		// A job submitted by a workload acts for the original submitter.
		return p.OnBehalfOf
	}
	return p.ID
}

// Authorizer decides whether a principal may take an action in a
// workspace; access.Service is the one. The request services declare
// their dependency on it by this interface, so that none depends on
// where authorization lives.
type Authorizer interface {
	Authorize(ctx context.Context, p *Principal, workspace, action string) error
}
