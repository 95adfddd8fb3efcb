// Package instances is the control loop of compute instances: for every
// instance, instance.Step decides at the pass's now (operations, a lost
// machine, idle shutdown, schedules) and the loop carries it out:
// provisions the instance's node, releases it, removes a deleted
// instance with its home. The controller (package control) runs it once
// per pass.
package instances

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
)

// Services is what the instance loop needs of the request services.
// *service.Services implements it.
type Services interface {
	loop.Base
	loop.Notifier
	// Provider is a location's provider, or nil.
	Provider(loc *catalog.Location) node.Provider
	// CheckInstanceQuota fails with EQUOTA when starting c would exceed a
	// quota.
	CheckInstanceQuota(tx store.Tx, c *compute.Compute) error
	// FailQueuedJobs fails the jobs queued on a compute being deleted.
	FailQueuedJobs(ctx context.Context, tx store.Tx, c *compute.Compute, out *service.JobOutcomes) error
	// PreemptNodeBecause evicts a node as its provider would.
	PreemptNodeBecause(ctx context.Context, workspace, compute, nodeID, reason string) error
	// Report tells the observer the jobs a transaction ended.
	Report(o *service.JobOutcomes)
	// WakeNodes wakes the named nodes' agents' long polls.
	WakeNodes(ids ...string)
	// Live is what instances' agents last reported.
	Live() live.InstanceState
	// RememberIdle, OverlayIdle, IdleWriteDue and IdleWritten keep
	// instances' idle bookkeeping between writes.
	RememberIdle(key string, st compute.InstanceStatus)
	OverlayIdle(comp *compute.Compute)
	IdleWriteDue(key string, now time.Time) bool
	IdleWritten(key string, now time.Time)
}

var _ Services = (*service.Services)(nil)

// Loop is the instance loop's state between passes.
type Loop struct {
	s   Services
	cfg service.Config
	// release gives a node back to its provider and removes it, in the
	// background; the controller's, shared with node lifecycle and
	// scaling so that a node is released once.
	release func(ctx context.Context, n *node.Node)

	// backoff holds the instances whose steps failed (loop.Each).
	backoff *loop.Backoff

	mu sync.Mutex
	// schedules caches instances' compiled schedules.
	schedules map[string]compiledSchedules
}

// New returns the instance loop over s, with the services' configuration
// cfg (join timeout, server URL and CA, idle minute, files) and the
// controller's release.
func New(s Services, cfg service.Config, release func(ctx context.Context, n *node.Node)) *Loop {
	return &Loop{s: s, cfg: cfg, release: release, backoff: loop.NewBackoff(0)}
}
