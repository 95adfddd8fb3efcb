// Package quota answers the requests about what a location and a
// workspace may hold: a location's vCPU usage against its quota
// (usages), the workspaces' own vCPU limits per VM family (Azure's
// updateQuotas), the check that starting an instance stays within both,
// and a workspace's limits (its log cap and storage quota).
//
// It owns the counting of vCPUs held (nodes, and stopped instances that
// keep their quota) but none of the placement that obeys it: the
// scheduler and the autoscaler read the same limits from a snapshot.
// service.Services embeds *Quotas, so its callers call these methods on
// the services as before.
package quota

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// Config is what Quotas needs of the server.
type Config struct {
	// Store is the store the services write through (audited).
	Store   store.Store
	Catalog *catalog.Catalog
	Auth    identity.Authorizer
	// Notify tells the controller that limits changed (a raised limit
	// may let a queued job start); it must not block. Nil: nobody.
	Notify func()
	// StorageUsage returns the bytes a workspace's files take; nil when
	// the server has no file store.
	StorageUsage func(workspace string) (int64, error)
	// Subscription is the subscription ID of Azure-shaped resource IDs.
	Subscription string
}

// Quotas serves the quota and limits requests over one store.
type Quotas struct {
	cfg Config
}

// New returns the quota requests for cfg.
func New(cfg Config) *Quotas {
	if cfg.Notify == nil {
		cfg.Notify = func() {}
	}
	return &Quotas{cfg: cfg}
}

// requireAdmin fails unless the caller is an administrator.
func requireAdmin(ctx context.Context, what string) error {
	p := identity.PrincipalFrom(ctx)
	if p == nil || !p.Admin {
		return core.Errorf(core.EFORBIDDEN, "%s needs an administrator", what)
	}
	return nil
}

func workspaceNotFound(name string) error {
	return core.Errorf(core.ENOTFOUND, "workspace %q not found", strings.TrimSpace(name))
}
