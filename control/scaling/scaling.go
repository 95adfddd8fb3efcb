// Package scaling is the control loop that sizes computes: the
// autoscaler (package autoscaler) plans over the state the placement pass
// left, and this loop carries its decisions out — provisions nodes
// through the provider (clusters and instances' job slots), releases idle
// ones, records why a cluster could not grow (which the next placement
// pass quotes), and holds back a provider that keeps failing. Budgets
// found reached (control/accounting) stop scale-up for their scope.
package scaling

import (
	"context"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/scheduling"
)

// Services is what the scaling loop needs of the request services.
// *service.Services implements it.
type Services interface {
	loop.Base
	// Provider is a location's provider, or nil.
	Provider(loc *catalog.Location) node.Provider
	// Observe is the observer of scale decisions and provisioning.
	Observe() service.Observer
	// WakeNodes wakes the named nodes' agents' long polls.
	WakeNodes(ids ...string)
	// BudgetBlocks are the blocking budgets the accounting loop found
	// reached, and whether it has priced them yet.
	BudgetBlocks() (money.BudgetBlocks, bool)
}

var _ Services = (*service.Services)(nil)

// Loop is the scaling loop's state between passes.
type Loop struct {
	s   Services
	cfg service.Config
	// release gives a node back to its provider and removes it, in the
	// background: the node loop's, so that a node is released once.
	release func(ctx context.Context, n *node.Node)
	as      *autoscaler.Autoscaler

	mu          sync.Mutex
	blocked     map[string]Block // cluster key → why the last pass could not grow it
	recorded    map[string]bool  // recordKey of the Blocked/None decisions of the last pass
	nextBlocked map[string]Block // the same, being collected by the pass under way
	seen        map[string]bool
	// afterSchedule is the state the placement pass left, which this pass
	// plans from instead of reading the store again.
	afterSchedule *scheduling.State
	// now is the pass's time, which its decisions' backoff (isolate.go)
	// is judged at.
	now time.Time
	// only, when set, are the clusters this pass plans (RunFor).
	only map[string]bool
	// provisionFailures holds back clusters whose provider failed to
	// provision, so that a provider that keeps failing (a host key that
	// does not match) is not asked again on every pass.
	provisionFailures map[string]provisionFailure
	// gangHolds holds back scale-up of clusters whose gang's nodes were
	// released for not coming up whole (gang_backoff.go).
	gangHolds map[string]gangHold
}

// New returns the scaling loop over s, with the services' configuration
// cfg (join timeout, the server's URL and CA, the clock) and the node
// loop's release.
func New(s Services, cfg service.Config, release func(ctx context.Context, n *node.Node)) *Loop {
	c := &Loop{s: s, cfg: cfg, release: release, blocked: map[string]Block{}, recorded: map[string]bool{}, nextBlocked: map[string]Block{}, seen: map[string]bool{}}
	c.as = &autoscaler.Autoscaler{Source: scaleSource{c}, Actuator: isolated{inner: scaleActuator{c}, c: c, b: loop.NewBackoff(0)}}
	return c
}

// RunOnce runs the autoscaler at now and carries its decisions out. st is
// the state the placement pass left (nil: read the store).
func (c *Loop) RunOnce(ctx context.Context, now time.Time, st *scheduling.State) error {
	return c.RunFor(ctx, now, st, nil)
}

// RunFor is RunOnce for the clusters in keys alone (nil: every one),
// against the quota the others' nodes hold (autoscaler.Snapshot.Only):
// what a job submitted to one of them needs. The blocks and recorded
// situations of the other clusters stay as their last pass left them.
func (c *Loop) RunFor(ctx context.Context, now time.Time, st *scheduling.State, keys map[string]bool) error {
	c.mu.Lock()
	c.afterSchedule, c.only, c.now = st, keys, now
	c.mu.Unlock()
	c.beginScalePass()
	decisions, err := c.as.RunOnce(ctx, now)
	// A pass that got no snapshot says nothing about what ended.
	c.endScalePass(err == nil || len(decisions) > 0, keys)
	return err
}
