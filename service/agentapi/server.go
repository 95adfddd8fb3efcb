// Package agentapi is the server's side of the node agent protocol: a
// node's join, its syncs (heartbeat, work poll and the parked long poll),
// its rank's logs, outputs, restored checkpoints, artifacts, GPU samples
// and workload tokens, and its host reports (container runtime,
// pre-pulls). It is apart from package service so that the protocol's
// concurrency (group-committed heartbeats, parked syncs, the credential
// cache, the bounded reads) is read and tested on its own; what it asks
// of the job, compute, token and storage services goes through the
// narrow interfaces below, which service.Services meets, so the
// dependency points one way: service links agentapi, never the reverse.
package agentapi

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/decide/nodelease"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
)

// Jobs is what the protocol asks of the job services: a rank's task is
// the job's, and a rank ended on a node's behalf moves the job's state
// machine, which lives with the jobs.
type Jobs interface {
	// AgentTask builds the task of node n's rank of attempt a of job j.
	AgentTask(tx store.Tx, j *job.Job, a *job.Attempt, n *node.Node) (*node.AgentTask, error)
	// EndRankForNode ends a rank on the server's own account, unless it
	// is no longer in status from.
	EndRankForNode(ctx context.Context, nodeID string, ref node.RankRef, from, state, reason string) error
	// FailRankForNode ends a rank Failed with failure (the job's fault:
	// no retry spent, no node lost), unless it is no longer in status from.
	FailRankForNode(ctx context.Context, nodeID string, ref node.RankRef, from string, failure job.RankFailure, reason string) error
	// InputArtifacts lists the uploads j's remote inputs stand for,
	// which its node may read besides those j names itself.
	InputArtifacts(tx store.Tx, j *job.Job) []string
}

// Computes is what the protocol asks of the compute service (package
// computes): an instance's task and report, a cluster's SSH settings and
// a node's own leaving.
type Computes interface {
	// RecordInstanceReport keeps what an instance's agent reported.
	RecordInstanceReport(ctx context.Context, nodeID string, r *node.InstanceReport)
	// InstanceTask is what an instance's node is told to serve.
	InstanceTask(tx store.Tx, n *node.Node) (*node.InstanceTask, error)
	// NodeSSH is a cluster's SSH settings, told on a first sync.
	NodeSSH(c *compute.Compute) *node.NodeSSH
	// RecordNodeSSHPort keeps the port a node's SSH server listens on.
	RecordNodeSSHPort(ctx context.Context, nodeID string, port int) error
	// NodeLeaving records that a node's agent said it is leaving.
	NodeLeaving(ctx context.Context, nodeID, why string) error
}

// Tokens mints workload-identity tokens (package access) for a node's
// rank or instance, after the protocol has checked what the node runs.
type Tokens interface {
	// Workload is the issuer; nil when this server issues no tokens.
	Workload() *workload.Issuer
	// MintToken signs claims the protocol has checked.
	MintToken(ctx context.Context, claims workload.Claims) (*node.TokenResponse, error)
}

// Storage writes a workspace's files within its storage quota (package
// service/storage): a rank's log and its outputs count towards it.
type Storage interface {
	// WriteCappedLog writes a log's chunk within its cap and the quota.
	WriteCappedLog(l money.WorkspaceLimits, f store.LogFile, offset int64, data []byte) error
	// PutWithinQuota runs an upload reserving the quota as it streams.
	PutWithinQuota(ctx context.Context, workspace string, r io.Reader, max int64, put func(r io.Reader, max int64) error) error
}

// Config wires a Server; the services pass their own settings (see
// service.Config for each).
type Config struct {
	// Store is the services' (auditing) store.
	Store store.Store
	// Files keeps ranks' logs, outputs and the artifacts nodes read.
	Files store.Files
	// Logger logs joins and pre-pulls; nil discards.
	Logger *slog.Logger
	// Jobs, Computes, Tokens and Storage answer what the protocol asks
	// of the other services (service.Services meets all four).
	Jobs     Jobs
	Computes Computes
	Tokens   Tokens
	Storage  Storage
	// Notify tells the controllers of a change (a node became free); it
	// must not block.
	Notify func()
	// Changed tells the controllers of a change confined to the compute
	// of key (shoal.ComputeKey): a node of it joined. Nil: Notify.
	Changed func(computeKey string)
	// NodeReady is told how long a node took from creation to join
	// (metrics); it must not block.
	NodeReady func(workspace, compute string, took time.Duration)
	// Wakes wakes and parks nodes' long polls.
	Wakes live.Wakes
	// AgentReads bounds the read transactions syncs hold at once
	// (agentView); 0 takes the store's (shoal.ReadPool) half, or 2.
	AgentReads int
	// NodeLeaseTTL and NodeLeaseGrace bound a node's lease.
	NodeLeaseTTL, NodeLeaseGrace time.Duration
	// Lease sizes the lease agents are told to the fleet; nil grants
	// NodeLeaseTTL whatever the fleet.
	Lease *nodelease.Keeper
	// Clock is the time leases are granted at; nil is the system's.
	Clock core.Clock
	// GPUSampleInterval is how often nodes sample their GPUs.
	GPUSampleInterval time.Duration
	// ServerURL and Servers are where agents reach the servers.
	ServerURL string
	Servers   func(ctx context.Context) []string
	// CuratedEnvironments resolve a cluster's prepull_images.
	CuratedEnvironments asset.CuratedEnvironments
	// SecretsKey opens the registry logins a pre-pull carries.
	SecretsKey *sealing.Key
}

// Server answers the node agents' requests.
type Server struct {
	cfg      Config
	store    store.Store
	log      *slog.Logger
	notify   func()
	wakes    live.Wakes
	jobs     Jobs
	computes Computes
	tokens   Tokens
	storage  Storage
	beats    *heartbeatBatch
	// credCache remembers which node a credential belongs to.
	credCache credCache
	// agentReads holds a token per agent read under way (agentView).
	agentReads chan struct{}
	// parked counts the syncs parked per node (maxParkedPerNode).
	parked parkedCounts
}

// New returns the protocol's server for cfg; cfg's durations are the
// services' (already defaulted), and a nil Logger, Notify, NodeReady or
// Wakes does nothing (or wakes this server's own polls).
func New(cfg Config) *Server {
	if cfg.AgentReads <= 0 {
		cfg.AgentReads = 2
		if p, ok := cfg.Store.(store.ReadPool); ok {
			cfg.AgentReads = max(1, p.ReadConns()/2)
		}
	}
	if cfg.NodeLeaseTTL == 0 {
		cfg.NodeLeaseTTL = node.DefaultNodeLeaseTTL
	}
	if cfg.NodeLeaseGrace == 0 {
		cfg.NodeLeaseGrace = node.DefaultNodeLeaseGrace
	}
	if cfg.Lease == nil {
		cfg.Lease = nodelease.New(nodelease.Config{Min: cfg.NodeLeaseTTL})
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
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
	if cfg.NodeReady == nil {
		cfg.NodeReady = func(string, string, time.Duration) {}
	}
	if cfg.Wakes == nil {
		cfg.Wakes = live.NewHub()
	}
	return &Server{
		cfg: cfg, store: cfg.Store, log: cfg.Logger, notify: cfg.Notify, wakes: cfg.Wakes,
		jobs: cfg.Jobs, computes: cfg.Computes, tokens: cfg.Tokens, storage: cfg.Storage,
		beats: newHeartbeatBatch(), agentReads: make(chan struct{}, cfg.AgentReads),
	}
}
