// Package service implements Shoal's domain services over a shoal.Store:
// jobs and their attempts, schedules and views, and Services, the one
// value that bundles the request services (access, computes, quota, cost,
// and service's own rooms: agentapi, the agent protocol; storage, the
// storage quota's writes; workspaces; scheduling, placement's read model
// and its start of attempts; joboutputs, jobs' outputs). It holds
// the business rules that are independent of transport and storage: the
// HTTP layer calls it, and the stores only persist what it decides.
package service

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal/decide/nodelease"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/service/agentapi"
	"github.com/shoal-ml/shoal/service/computes"
	"github.com/shoal-ml/shoal/service/cost"
	"github.com/shoal-ml/shoal/service/joboutputs"
	"github.com/shoal-ml/shoal/service/locations"
	"github.com/shoal-ml/shoal/service/quota"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/service/storage"
	"github.com/shoal-ml/shoal/service/workspaces"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
)

// Config wires a Services value.
type Config struct {
	Store   store.Store
	Catalog *catalog.Catalog
	Logger  *slog.Logger
	// Notify, when set, is called after a change that controllers should
	// react to (for example a new compute to provision). It must not block.
	Notify func()
	// Submitted, when set, is called instead of Notify after a job is
	// submitted, with its compute's key (shoal.ComputeKey): the server
	// then decides for that compute's queue alone. It must not block.
	Submitted func(computeKey string)
	// Changed, when set, is called instead of Notify after a change
	// confined to one compute (a node of it joined, pre-pulled its
	// images or was freed with no next job, a job of it queued again, a
	// cluster created or deleted, a node released: once for each compute
	// its quota was shared with), with its key: the
	// server then decides for that compute's queue alone. It must not
	// block.
	Changed func(computeKey string)
	// AgentReads bounds the read transactions agents' syncs hold at once
	// (agentapi); 0 takes the store's (shoal.ReadPool) half, or 2.
	AgentReads int
	// Files keeps artifacts, logs and outputs; nil disables jobs.
	Files store.Files
	// Providers by provider name ("local"), or by location name for a
	// provider that serves one location (an ssh pool); a location's nodes
	// come from its provider.
	Providers map[string]node.Provider
	// ServerURL is where agents reach this server.
	ServerURL string
	// Servers lists where agents reach every server sharing the store
	// (this one's ServerURL among them), for agents to move to another
	// when theirs stops answering; nil means ServerURL alone. Called for
	// every join and sync: it must be cheap (the server caches it).
	Servers func(ctx context.Context) []string
	// ServerCA is the PEM of the CA of the server's HTTPS certificate, handed
	// to the nodes it provisions; nil over HTTP or with a public certificate.
	ServerCA []byte
	// Random is the source of names and tokens; nil means crypto/rand.
	Random io.Reader
	// NodeLeaseTTL and NodeLeaseGrace bound node-loss detection.
	NodeLeaseTTL, NodeLeaseGrace time.Duration
	// MaxHeartbeatsPerSecond is the fleet's syncs a second the lease is
	// sized for: a fleet larger than NodeLeaseTTL/3 × it gets a longer
	// lease (decide/nodelease). Zero is nodelease.DefaultMaxRate;
	// negative keeps NodeLeaseTTL whatever the fleet.
	MaxHeartbeatsPerSecond float64
	// JoinTimeout is how long a provisioned node may take to join after its
	// location's provisioning delay before it is declared unusable.
	JoinTimeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL when a job is stopped.
	KillGrace time.Duration
	// GPUSampleInterval is how often nodes with GPUs sample their
	// utilisation into their jobs' events (default 1 minute).
	GPUSampleInterval time.Duration
	// Workload mints and verifies workload-identity tokens; nil disables
	// managed identities.
	Workload *workload.Issuer
	// SecretsKey seals the workload signing keys in the store; it is kept
	// outside the database (secrets_key_file). Nil: this server can
	// neither sign nor read sealed keys, and says so.
	SecretsKey *sealing.Key
	// InstancePolicy is imposed on compute instances.
	InstancePolicy computes.InstancePolicy
	// IdleMinute is how long one minute of an instance's idle time lasts:
	// one minute, unless shortened to rehearse idle shutdown.
	IdleMinute time.Duration
	// PublicURL is the server's URL as users reach it, for the links to
	// instances' applications; default ServerURL.
	PublicURL string
	// AppsURL is the origin (scheme://host:port) where the server serves
	// instances' applications, apart from the API's and studio's origin;
	// default PublicURL.
	AppsURL string
	// CuratedEnvironments maps Azure's curated environment names to the
	// images the operator provides (config curated_environments); a job
	// naming an unmapped one is refused at submit.
	CuratedEnvironments asset.CuratedEnvironments
	// Clock drives instance lifecycle decisions made outside the
	// controller's pass (postponing a shutdown); default the wall clock.
	Clock core.Clock
	// Wakes wakes node agents' long polls; default one server's
	// live.Hub. Replicas sharing a store pass one that forwards wakes
	// between them (postgres.Wakes).
	Wakes live.Wakes
}

// ReasonMessageEvery bounds how often the leader writes wait reasons
// whose sentence alone changed ("waiting behind 2 jobs" after "behind
// 3"); a new code is written with the pass that found it. The leader
// shows its latest pass at once, other replicas at most this late.
const ReasonMessageEvery = 5 * time.Second

// The embedded services' field names (several types named Service).
type (
	accessService     = access.Service
	computesService   = computes.Service
	storageService    = storage.Service
	agentServer       = agentapi.Server
	workspacesService = workspaces.Service
)

// Services bundles the domain services over one store.
type Services struct {
	// The request services per resource, embedded so that their methods
	// are the services' own (what api/, arm/ and studio/ call).
	*accessService
	*computesService
	// Quotas and Costs serve the quota, limits, cost and budget requests
	// (packages quota and cost); embedded, so their methods are the
	// services' own to callers.
	*quota.Quotas
	*cost.Costs
	// Locations serves the location requests (package locations).
	*locations.Locations
	// The agent protocol's server (package agentapi) and the storage
	// quota's writes (package service/storage), embedded for the same
	// reason: api/ calls their methods on the services.
	*agentServer
	*storageService
	// Workspaces serves the workspace requests (package
	// service/workspaces), embedded likewise.
	*workspacesService
	// observer is told what was committed (metrics); see SetObserver.
	observer  atomic.Pointer[Observer]
	store     store.Store
	catalog   *catalog.Catalog
	log       *slog.Logger
	notify    func()
	submitted func(computeKey string) // Config.Submitted, else notify
	changed   func(computeKey string) // Config.Changed, else notify
	cfg       Config
	nodes     live.Wakes
	reasons   live.WaitReasons
	// budgets are the block budgets found reached, which placement and
	// scale-up obey (package scheduling).
	budgets *scheduling.BudgetGate
	// outputs registers and opens jobs' outputs (package joboutputs).
	outputs *joboutputs.Outputs
	// placer starts the attempts placement decides.
	placer *scheduling.Placer
	// live is what instances' agents last reported and the last request
	// through each instance's application proxy, the same on every
	// replica.
	live live.InstanceState
	// lease sizes nodes' leases to the fleet, shared by the agents'
	// protocol (what agents are told) and the node loop (LeaseExpiry).
	lease *nodelease.Keeper
}

// New returns the services for cfg.
func New(cfg Config) *Services {
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.NodeLeaseTTL == 0 {
		cfg.NodeLeaseTTL = node.DefaultNodeLeaseTTL
	}
	if cfg.NodeLeaseGrace == 0 {
		cfg.NodeLeaseGrace = node.DefaultNodeLeaseGrace
	}
	if cfg.MaxHeartbeatsPerSecond == 0 {
		cfg.MaxHeartbeatsPerSecond = nodelease.DefaultMaxRate
	}
	if cfg.JoinTimeout == 0 {
		cfg.JoinTimeout = 5 * time.Minute
	}
	if cfg.GPUSampleInterval == 0 {
		cfg.GPUSampleInterval = time.Minute
	}
	if cfg.KillGrace == 0 {
		cfg.KillGrace = 10 * time.Second
	}
	if cfg.IdleMinute <= 0 {
		cfg.IdleMinute = time.Minute
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = cfg.ServerURL
	}
	if cfg.AppsURL == "" {
		cfg.AppsURL = cfg.PublicURL
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	audited := access.AuditingStore{Store: cfg.Store}
	s := &Services{accessService: access.New(access.Config{Store: audited, Random: cfg.Random, ServerURL: cfg.ServerURL, Workload: cfg.Workload, SecretsKey: cfg.SecretsKey}), store: audited, catalog: cfg.Catalog, log: cfg.Logger, notify: cfg.Notify, cfg: cfg, nodes: cfg.Wakes, budgets: &scheduling.BudgetGate{}}
	s.placer = &scheduling.Placer{Random: cfg.Random, Catalog: cfg.Catalog, Budgets: s.budgets, AppendEvents: appendStepEvents}
	if s.nodes == nil {
		s.nodes = live.NewHub()
	}
	s.reasons = live.NewReasons(live.ReasonsConfig{Store: cfg.Store, MessageEvery: ReasonMessageEvery})
	// The store itself, not the auditing one: a report or a proxied
	// request is no change of the user's to audit.
	s.live = live.NewInstances(live.Config{Store: cfg.Store, WriteEvery: min(cfg.IdleMinute/4, computes.IdleWriteEvery)})
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.notify == nil {
		s.notify = func() {}
	}
	if s.submitted = cfg.Submitted; s.submitted == nil {
		s.submitted = func(string) { s.notify() }
	}
	if s.changed = cfg.Changed; s.changed == nil {
		s.changed = func(string) { s.notify() }
	}
	s.outputs = &joboutputs.Outputs{Store: audited, Files: cfg.Files, Find: s.FindJob}
	s.workspacesService = workspaces.New(workspaces.Config{Store: audited, Catalog: cfg.Catalog, Access: s.accessService})
	s.storageService = storage.New(storage.Config{Store: audited, Files: cfg.Files})
	s.computesService = computes.New(computes.Config{
		Store: audited, Catalog: cfg.Catalog, Logger: s.log, Notify: s.notify, Changed: s.changed, Wake: s.nodes.Wake,
		Files: cfg.Files, Providers: cfg.Providers, Live: s.live, Access: s.accessService, Quota: s, Logs: s,
		Random: cfg.Random, InstancePolicy: cfg.InstancePolicy, IdleMinute: cfg.IdleMinute,
		ServerURL: cfg.ServerURL, PublicURL: cfg.PublicURL, AppsURL: cfg.AppsURL, Clock: cfg.Clock,
		CuratedEnvironments: cfg.CuratedEnvironments, SecretsKey: cfg.SecretsKey,
	})
	var storageUsage func(string) (int64, error)
	if cfg.Files != nil {
		storageUsage = cfg.Files.Usage
	}
	s.Quotas = quota.New(quota.Config{Store: s.store, Catalog: s.catalog, Auth: s, Notify: s.notify, StorageUsage: storageUsage, Subscription: compute.Subscription})
	s.Locations = locations.New(locations.Config{Store: s.store, Catalog: s.catalog, Auth: s, Provider: s.Provider, Usages: s.ListUsages})
	s.Costs = cost.New(cost.Config{Store: s.store, Catalog: s.catalog, Auth: s, Notify: s.notify})
	s.lease = nodelease.New(nodelease.Config{Min: cfg.NodeLeaseTTL, MaxRate: cfg.MaxHeartbeatsPerSecond,
		Count: func(ctx context.Context) (n int, err error) {
			err = cfg.Store.View(ctx, func(tx store.Tx) error {
				n, err = tx.CountNodes()
				return err
			})
			return n, err
		}})
	s.agentServer = agentapi.New(agentapi.Config{
		Store: audited, Files: cfg.Files, Logger: s.log, Notify: s.notify, Changed: s.changed, Wakes: s.nodes,
		Jobs: s, Computes: s.computesService, Tokens: s.accessService, Storage: s.storageService,
		NodeReady: func(workspace, compute string, took time.Duration) {
			s.Observe().NodeReady(workspace, compute, took)
		},
		AgentReads: cfg.AgentReads, NodeLeaseTTL: cfg.NodeLeaseTTL, NodeLeaseGrace: cfg.NodeLeaseGrace, Lease: s.lease, Clock: cfg.Clock,
		GPUSampleInterval: cfg.GPUSampleInterval, ServerURL: cfg.ServerURL, Servers: cfg.Servers,
		CuratedEnvironments: cfg.CuratedEnvironments, SecretsKey: cfg.SecretsKey,
	})
	return s
}

// LeaseGrant is the lease agents are told now (metrics show it).
func (s *Services) LeaseGrant(ctx context.Context) time.Duration {
	return s.lease.Grant(ctx, s.cfg.Clock.Now())
}

// LeaseExpiry is the lease a node's silence is judged by at now: the
// configured lease, or the longer one a large fleet was lately granted
// (decide/nodelease).
func (s *Services) LeaseExpiry(ctx context.Context, now time.Time) time.Duration {
	return s.lease.Expiry(ctx, now)
}

// Now is the services' clock's time: reports that default a window to
// "until now" read it, so a server on a test clock prices that clock's
// window.
func (s *Services) Now() time.Time { return s.cfg.Clock.Now() }

// Catalog returns the catalog of locations and sizes.
func (s *Services) Catalog() *catalog.Catalog { return s.catalog }

// Files returns the file store.
func (s *Services) Files() store.Files { return s.cfg.Files }

// SecretsKey is the key that seals the secrets kept in the store (nil:
// none), for the request services that keep secrets of their own.
func (s *Services) SecretsKey() *sealing.Key { return s.cfg.SecretsKey }

var (
	_ compute.ComputeService = (*Services)(nil)
	_ core.WorkspaceService  = (*Services)(nil)
	_ job.JobService         = (*Services)(nil)
)
