// Package access holds the requests about who may do what: users, API
// tokens, service principals, OIDC sign-in, roles and their assignments,
// managed identities and the workload tokens minted for them, the audit
// log, and the one authorization decision every other service asks
// (Authorize). It owns no control loop.
package access

import (
	"crypto/rand"
	"io"

	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/store"
)

// Config wires a Service.
type Config struct {
	// Store is where principals, roles and tokens live; wrap it in
	// AuditingStore so that every change a request makes is audited.
	Store store.Store
	// Random is the source of IDs and client IDs; nil means crypto/rand.
	Random io.Reader
	// ServerURL is the server's URL, an audience workload tokens carry.
	ServerURL string
	// Workload mints and verifies workload-identity tokens; nil disables
	// managed identities (see SetWorkload).
	Workload *workload.Issuer
	// SecretsKey seals the workload signing keys and other secrets in the
	// store; nil: this server can neither sign nor read sealed keys.
	SecretsKey *sealing.Key
}

// Service answers the access requests over one store.
type Service struct {
	store store.Store
	cfg   Config
}

// New returns the access service for cfg.
func New(cfg Config) *Service {
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	return &Service{store: cfg.Store, cfg: cfg}
}
