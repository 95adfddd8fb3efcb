// Package computes answers the requests about computes and their nodes:
// creating, updating and deleting clusters and compute instances, an
// instance's start, stop, restart and applications, the nodes of a
// compute and the static nodes an administrator adds, and what an
// instance's agent is told and reports. It owns no control loop: the
// loops in control/ act on what it stores.
package computes

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"

	"github.com/shoal-ml/shoal/store/live"
)

// Access is what computes asks of access/: whether a principal may act,
// and that the identities a compute names exist.
type Access interface {
	identity.Authorizer
	EnsureComputeIdentities(ctx context.Context, tx store.Tx, ws string, spec *compute.ComputeSpec) error
}

// Quota is what computes asks of the quota service: whether an
// instance's cores fit its workspace's and location's quotas.
type Quota interface {
	CheckInstanceQuota(tx store.Tx, c *compute.Compute) error
}

// Logs writes a stored log within its workspace's log cap and storage
// quota.
type Logs interface {
	WriteCappedLog(l money.WorkspaceLimits, f store.LogFile, offset int64, data []byte) error
}

// Config wires a Service.
type Config struct {
	Store   store.Store
	Catalog *catalog.Catalog
	Logger  *slog.Logger
	// Notify tells the control loops of a change; it must not block.
	Notify func()
	// Changed tells them of a change confined to the compute of key
	// (shoal.ComputeKey): here, a cluster created or deleted. Nil:
	// Notify.
	Changed func(computeKey string)
	// Wake ends the long polls of the named nodes' agents, so they sync
	// at once.
	Wake func(nodeIDs ...string)
	// Files keeps instances' setup logs.
	Files store.Files
	// Providers by provider or location name; see Provider.
	Providers map[string]node.Provider
	// Live is what instances' agents last reported, the same on every
	// replica.
	Live   live.InstanceState
	Access Access
	Quota  Quota
	Logs   Logs
	// Random is the source of names; nil means crypto/rand.
	Random io.Reader
	// InstancePolicy is imposed on compute instances.
	InstancePolicy InstancePolicy
	// IdleMinute is how long one minute of an instance's idle time lasts.
	IdleMinute time.Duration
	// ServerURL, PublicURL and AppsURL: where agents, users and
	// instances' applications reach the server.
	ServerURL, PublicURL, AppsURL string
	// Clock drives the lifecycle decisions taken on a request
	// (postponing a shutdown).
	Clock core.Clock
	// CuratedEnvironments resolves the curated names a cluster's
	// prepull_images may list.
	CuratedEnvironments asset.CuratedEnvironments
	// SecretsKey opens the workspace's registry logins that an
	// instance's applications pull their images with (nil: none).
	SecretsKey *sealing.Key
}

// Service answers the requests about computes, nodes and instances.
type Service struct {
	store     store.Store
	catalog   *catalog.Catalog
	log       *slog.Logger
	notify    func()
	cfg       Config
	live      live.InstanceState
	instances *instanceHub
}

// New returns the computes service for cfg; the caller fills in its
// defaults (service.New does).
func New(cfg Config) *Service {
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Notify == nil {
		cfg.Notify = func() {}
	}
	if cfg.Changed == nil {
		notify := cfg.Notify
		cfg.Changed = func(string) { notify() }
	}
	if cfg.Wake == nil {
		cfg.Wake = func(...string) {}
	}
	return &Service{store: cfg.Store, catalog: cfg.Catalog, log: cfg.Logger, notify: cfg.Notify, cfg: cfg, live: cfg.Live, instances: newInstanceHub()}
}
