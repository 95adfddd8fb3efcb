// Package nodes is the control loop of nodes and the computes they
// belong to: leases (a node whose agent stopped reporting is lost and its
// work requeued, a node that never joined is given up), releases (in the
// background, once per node whichever loop asks), compute reconciliation
// (provisioning states, removing a deleted cluster), and what a server
// does on taking the lead (fresh leases, adopting nodes whose agents kept
// running). The controller (package control) orders it among the other
// loops.
package nodes

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// Services is what the node loop needs of the request services.
// *service.Services implements it.
type Services interface {
	loop.Base
	loop.Notifier
	// Changed asks for a placement pass over the queue of the compute
	// of key alone (a released node's quota concerns a few computes).
	Changed(key string)
	// ProviderFor is a location's provider, or nil.
	ProviderFor(location string) node.Provider
	// LoseNode marks a node unusable and ends its rank as Lost.
	LoseNode(ctx context.Context, tx store.Tx, n *node.Node, reason string, outcomes *service.JobOutcomes) ([]string, error)
	// FailQueuedJobs fails the jobs queued on a compute being deleted.
	FailQueuedJobs(ctx context.Context, tx store.Tx, c *compute.Compute, out *service.JobOutcomes) error
	// Report tells the observer the jobs a transaction ended.
	Report(o *service.JobOutcomes)
	// WakeNodes wakes the named nodes' agents' long polls.
	WakeNodes(ids ...string)
	// LeaseExpiry is the lease a node's silence is judged by at now: the
	// configured one, or longer for a large fleet (decide/nodelease).
	LeaseExpiry(ctx context.Context, now time.Time) time.Duration
	// PreemptNodeBecause preempts a node, saying why (a machine its
	// provider took back).
	PreemptNodeBecause(ctx context.Context, workspace, compute, nodeID, reason string) error
}

var _ Services = (*service.Services)(nil)

// systemPrincipal is who the node loop acts as: the same as the services'
// own repairs (service/lifecycle.go), so that the record does not change
// with the move.
var systemPrincipal = identity.SystemPrincipal("system")

// Loop is the node loop's state between passes: the releases under way.
type Loop struct {
	s   Services
	cfg service.Config

	// losses, computes and releases hold the nodes whose loss, the
	// computes whose reconciliation and the nodes whose release failed
	// (loop.Each): one backoff per kind of step, as Each forgets what a
	// pass does not list.
	losses, computes, releases *loop.Backoff

	mu sync.Mutex
	// now is the time of the last pass (RunOnce), which the steps a pass
	// does not hand a time (Release, ReconcileComputes) judge their
	// backoffs at: the controller's injected clock, not the services'.
	now time.Time
	// hearing is when the loop began to hear nodes: its first pass
	// after a start or a lease reset (the server serves agents from
	// then on). No node's silence counts from before it: a server slow
	// to start (adopting nodes, a loaded machine) must not declare a
	// node lost whose lease ran out while nobody could hear it.
	hearing   time.Time
	releasing map[string]bool      // nodes whose release is under way
	watched   map[string]time.Time // when each preparing node's provider was last asked
	wg        sync.WaitGroup
}

// New returns the node loop over s, with the services' configuration cfg
// (leases, join timeout, the server's URL and CA).
func New(s Services, cfg service.Config) *Loop {
	return &Loop{s: s, cfg: cfg, releasing: map[string]bool{}, losses: loop.NewBackoff(0), computes: loop.NewBackoff(0), releases: loop.NewBackoff(0)}
}

// Wait waits for background node releases to finish (tests, shutdown).
func (c *Loop) Wait() { c.wg.Wait() }

// passNow is the time of the last pass, or the services' clock's before
// the first.
func (c *Loop) passNow() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		return c.cfg.Clock.Now()
	}
	return c.now
}
