// Package service implements Shoal's domain services (computes, workspaces,
// sizes and quotas) over a shoal.Store. It holds the business rules that are
// independent of transport and storage: the HTTP layer calls it, and the
// stores only persist what it decides.
package service

import (
	"log/slog"

	"github.com/shoal-ml/shoal"
)

// Config wires a Services value.
type Config struct {
	Store   shoal.Store
	Catalog *shoal.Catalog
	Logger  *slog.Logger
	// Notify, when set, is called after a change that controllers should
	// react to (for example a new compute to provision). It must not block.
	Notify func()
}

// Services bundles the domain services over one store.
type Services struct {
	store   shoal.Store
	catalog *shoal.Catalog
	log     *slog.Logger
	notify  func()
}

// New returns the services for cfg.
func New(cfg Config) *Services {
	s := &Services{store: cfg.Store, catalog: cfg.Catalog, log: cfg.Logger, notify: cfg.Notify}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.notify == nil {
		s.notify = func() {}
	}
	return s
}

// Catalog returns the catalog of locations and sizes.
func (s *Services) Catalog() *shoal.Catalog { return s.catalog }

var (
	_ shoal.ComputeService   = (*Services)(nil)
	_ shoal.WorkspaceService = (*Services)(nil)
)
