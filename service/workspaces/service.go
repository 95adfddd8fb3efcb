// Package workspaces answers the requests on workspaces themselves:
// create, find, list (only those where the caller holds a role), delete
// (only an empty one) and the server's first start (the default
// workspace and its admin token). It is a request service of its own,
// over shoal.Store and the catalog, asking access only for the admin
// token, so that the rest of service need not be linked to test it.
package workspaces

import (
	"context"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/store"
)

// Access is what workspaces asks of the access service (package access).
type Access interface {
	// BootstrapAdminToken makes, on the first start only, an admin API
	// token, and returns it ("" when one was made before).
	BootstrapAdminToken(ctx context.Context) (string, error)
}

// Config wires a Service.
type Config struct {
	// Store keeps the workspaces (the services' auditing store).
	Store store.Store
	// Catalog resolves a new workspace's location.
	Catalog *catalog.Catalog
	// Access makes the first start's admin token.
	Access Access
}

// Service answers the workspace requests.
type Service struct {
	store   store.Store
	catalog *catalog.Catalog
	access  Access
}

// New returns the workspace service for cfg.
func New(cfg Config) *Service {
	return &Service{store: cfg.Store, catalog: cfg.Catalog, access: cfg.Access}
}
