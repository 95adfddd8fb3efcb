package control

import (
	"context"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/live"
	"github.com/shoal-ml/shoal/scheduler"
	"github.com/shoal-ml/shoal/service"
)

// Services is what the loops ask of the request services: the store and
// settings they share, the transitions a request can also take (placing a
// job, losing a node, failing a deleted compute's queue), and the
// in-memory state the request handlers read (wait reasons, budget blocks,
// instances' idle bookkeeping, agents' long polls). *service.Services
// implements it; the interface lives here, with its one consumer.
type Services interface {
	// Store is the (audited) store the loops read and write.
	Store() shoal.Store
	// Config is the services' configuration, defaults filled in.
	Config() service.Config
	// Catalog is the sizes and locations offered.
	Catalog() *shoal.Catalog
	// Logger is where the loops log what they could not do.
	Logger() *slog.Logger
	// Notify asks the server for a placement pass soon.
	Notify()
	// Provider and ProviderFor are a location's provider, or nil.
	Provider(loc *shoal.Location) shoal.Provider
	ProviderFor(location string) shoal.Provider

	// Observe and Report tell the observer the jobs a transaction
	// started and ended.
	Observe() service.Observer
	Report(o *service.JobOutcomes)

	// Place starts a queued job on nodes the scheduler chose.
	Place(ctx context.Context, tx shoal.Tx, ref shoal.QueuedJobRef, nodeIDs []string, st *service.State) (bool, error)
	// LoseNode marks a node unusable and ends its rank as Lost.
	LoseNode(ctx context.Context, tx shoal.Tx, n *shoal.Node, reason string, outcomes *service.JobOutcomes) ([]string, error)
	// PreemptNodeBecause evicts a node as its provider would.
	PreemptNodeBecause(ctx context.Context, workspace, compute, nodeID, reason string) error
	// FailQueuedJobs fails the jobs queued on a compute being deleted.
	FailQueuedJobs(ctx context.Context, tx shoal.Tx, c *shoal.Compute, out *service.JobOutcomes) error
	// CheckInstanceQuota fails with EQUOTA when starting c would exceed a
	// quota.
	CheckInstanceQuota(tx shoal.Tx, c *shoal.Compute) error
	// WakeNodes wakes the named nodes' agents' long polls.
	WakeNodes(ids ...string)

	// ReplaceReasons and SetReasonCode keep the queued jobs' wait
	// reasons the API shows.
	ReplaceReasons(r map[string]scheduler.Reason)
	SetReasonCode(id, code string) bool

	// BudgetStatusAt prices a budget's scope since its period began.
	BudgetStatusAt(tx shoal.Tx, ws string, b *shoal.Budget, now time.Time) (service.BudgetStatus, error)
	// BudgetBlocks and SetBudgetBlocks are the blocking budgets found
	// reached, which placement reads.
	BudgetBlocks() (service.BudgetBlocks, bool)
	SetBudgetBlocks(b service.BudgetBlocks)

	// Live is what instances' agents last reported.
	Live() live.InstanceState
	// RememberIdle, OverlayIdle, IdleWriteDue and IdleWritten keep
	// instances' idle bookkeeping between writes.
	RememberIdle(key string, st shoal.InstanceStatus)
	OverlayIdle(comp *shoal.Compute)
	IdleWriteDue(key string, now time.Time) bool
	IdleWritten(key string, now time.Time)
}

var _ Services = (*service.Services)(nil)
