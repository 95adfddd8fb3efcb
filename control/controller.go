package control

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/control/blobblocks"
	"github.com/shoal-ml/shoal/control/instances"
	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/control/pipelines"
	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/control/preemption"
	"github.com/shoal-ml/shoal/control/scaling"
	"github.com/shoal-ml/shoal/control/schedules"
	"github.com/shoal-ml/shoal/control/sweeps"
	"github.com/shoal-ml/shoal/control/watch"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// Controller runs the control loops over the store: node lifecycle
// (leases, releases), the scheduler, the autoscaler, compute provisioning
// and simulated preemption. Each pass is RunOnce(ctx, now); the server
// calls it on every change and on a tick, tests call it with a fake clock.
type Controller struct {
	s Services
	// cfg is the services' configuration, read once: the loops use only
	// settings fixed when the services were built (leases, join timeout,
	// the server's URL and CA, the clock, files), and a pass reads some of
	// them for every node.
	cfg service.Config

	// The loops with packages of their own.
	nodes *nodes.Loop            // leases, releases, compute reconciliation
	scale *scaling.Loop          // the autoscaler and provisioning
	inst  *instances.Loop        // the instance lifecycle
	acct  *accounting.Accounting // node samples, budgets
	place *placement.Loop        // the scheduler's placements and wait reasons
	// preempt simulates low-priority preemption.
	preempt *preemption.Loop
	// watch turns conditions (a long queue wait, idle GPUs, a node stuck
	// provisioning, an idle shutdown soon) into events once each.
	watch *watch.Loop
	// pipes and sweeps submit the children of pipeline and sweep jobs
	// (which the scheduler then places like any job).
	pipes  *pipelines.Loop
	sweeps *sweeps.Loop
	// blocks discards the Blob endpoint's blocks never committed.
	blocks *blobblocks.Loop
	// scheds fires job schedules (before the pipelines, whose jobs they
	// may submit).
	scheds *schedules.Loop

	// view holds the computes and nodes between placement passes.
	view *scheduling.View
	// placeMu makes placement and scaling passes one at a time (the
	// server runs them from the tick, from changes and from submissions,
	// on goroutines of their own), so that two autoscaler passes never
	// decide for the same demand. Only these passes hold it: a pass over
	// the whole queue plans without it.
	placeMu sync.Mutex
	// placing counts the placement passes waiting for placeMu or holding
	// it (yieldToPlacement).
	placing atomic.Int32
	// lastPrune is when node deletions the view has read were last
	// pruned from the store.
	lastPrune time.Time
	// observe is told of each placement pass (SetPassObserver).
	observe PassObserver

	mu sync.Mutex
	// passNodes is the state the placement pass left, kept for the node
	// samples of a full pass (taken by the accounting loop), so that they
	// do not read every node once more.
	passNodes *scheduling.State
}

// New returns the controller of s; seed makes its random choices
// (preemption) reproducible.
func New(s Services, seed uint64) *Controller {
	c := &Controller{s: s, cfg: s.Config(), acct: accounting.New(s), preempt: preemption.New(s, rand.New(rand.NewPCG(seed, seed^0x5eed)))}
	c.nodes = nodes.New(s, c.cfg)
	c.scale = scaling.New(s, c.cfg, c.nodes.Release)
	c.view = scheduling.NewView()
	c.watch = watch.New(s, watch.Thresholds{IdleMinute: c.cfg.IdleMinute})
	c.place = placement.New(s, c.scale, c.view)
	c.inst = instances.New(s, c.cfg, c.nodes.Release)
	c.pipes, c.sweeps = pipelines.New(s), sweeps.New(s)
	c.blocks = blobblocks.New(s)
	c.scheds = schedules.New(s)
	return c
}

// RunOnce runs one pass of every loop at time now: node lifecycle
// (leases, releases), scheduling, autoscaling, compute provisioning and
// simulated preemption.
func (c *Controller) RunOnce(ctx context.Context, now time.Time) error {
	return c.RunPass(ctx, now, true)
}

// RunPass is RunOnce, reading the whole queue only when wholeQueue: a
// pass without it schedules from the heads of the queues, as a placement
// pass does, and leaves waiting jobs' reasons as the last whole read set
// them. The server reads a long queue less often than it runs the other
// loops (reading 100,000 queued jobs took most of a pass).
func (c *Controller) RunPass(ctx context.Context, now time.Time, wholeQueue bool) error {
	var errs []error
	if err := c.nodes.RunOnce(ctx, now); err != nil {
		errs = append(errs, err)
	}
	// Schedules first: the jobs they submit are placed in this pass.
	if err := c.scheds.RunOnce(ctx, now); err != nil {
		errs = append(errs, err)
	}
	// Parents first: the children they submit are placed in this pass.
	if err := c.pipes.RunOnce(ctx, now); err != nil {
		errs = append(errs, err)
	}
	if err := c.sweeps.RunOnce(ctx, now); err != nil {
		errs = append(errs, err)
	}
	if err := c.placement(ctx, now, wholeQueue, PassFull); err != nil {
		errs = append(errs, err)
	}
	if err := c.nodes.ReconcileComputes(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := c.inst.RunOnce(ctx, now); err != nil {
		errs = append(errs, err)
	}
	c.preempt.RunOnce(ctx, now)
	// The node samples take the nodes as this pass's placement left them,
	// when it read them.
	c.mu.Lock()
	passNodes := c.passNodes
	c.passNodes = nil
	c.mu.Unlock()
	if err := c.acct.SampleNodes(ctx, now, passNodes); err != nil {
		errs = append(errs, err)
	}
	if err := c.acct.CheckBudgets(ctx, now); err != nil {
		errs = append(errs, err)
	}
	if err := c.pruneDeletions(ctx, now); err != nil {
		errs = append(errs, err)
	}
	if err := c.blocks.RunOnce(ctx, now); err != nil {
		errs = append(errs, err)
	}
	if err := c.watch.RunOnce(ctx, now); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Accounting is the accounting loop, for the server to hand its budget
// gauges to the metrics.
func (c *Controller) Accounting() *accounting.Accounting { return c.acct }

// Watch is the watch loop, for the server to set its thresholds (the
// notifications config) and where its gauges go.
func (c *Controller) Watch() *watch.Loop { return c.watch }

// pruneDeletionsEvery is how often the node deletions the view has read
// are forgotten by the store.
const pruneDeletionsEvery = time.Minute

// pruneDeletions forgets, every pruneDeletionsEvery, the node deletions
// the view has read (a view older than them, on a replica that takes the
// lead later, reads every node again).
func (c *Controller) pruneDeletions(ctx context.Context, now time.Time) error {
	gen := c.view.Gen()
	if gen == 0 || now.Sub(c.lastPrune) < pruneDeletionsEvery {
		return nil
	}
	c.lastPrune = now
	return c.s.Store().Update(ctx, func(tx store.Tx) error { return tx.PruneNodeDeletions(gen) })
}

// RunPlacement runs only the scheduler and the autoscaler: what a new job
// or a freed node needs at once. The server runs it on every change and
// the full RunOnce on a tick, so a busy server does not re-read every node
// and compute for each report an agent sends.
func (c *Controller) RunPlacement(ctx context.Context, now time.Time) error {
	return c.placement(ctx, now, false, PassChanges)
}

// RunPlacementFor runs the scheduler and the autoscaler for the queues
// of the computes in keys (by shoal.ComputeKey) alone: what jobs just
// submitted to them need, decided without scheduling or planning the
// other computes.
func (c *Controller) RunPlacementFor(ctx context.Context, now time.Time, keys map[string]bool) error {
	return c.placementFor(ctx, now, keys, PassSubmitted)
}

// RunPlacementForChanged is RunPlacementFor after a change confined to
// the computes in keys (a node of theirs joined or pre-pulled its images,
// a cluster created): the pass over every queue's heads and every
// cluster would find nothing else to do.
func (c *Controller) RunPlacementForChanged(ctx context.Context, now time.Time, keys map[string]bool) error {
	return c.placementFor(ctx, now, keys, PassComputes)
}

// placementFor runs the scheduler and the autoscaler for the queues of
// the computes in keys, observed as kind.
func (c *Controller) placementFor(ctx context.Context, now time.Time, keys map[string]bool, kind PassKind) error {
	asked, got := c.lockPlacement()
	defer c.observePass(kind, asked, got)
	defer c.unlockPlacement()
	var errs []error
	st, err := c.place.RunFor(ctx, now, keys)
	if err != nil {
		errs = append(errs, err)
	}
	if err := c.scale.RunFor(ctx, now, st, keys); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// RunWholeQueue reads the whole queue, places what it can past the heads
// of the queues (backfill) and writes every waiting job's reason. It
// reads and schedules without holding up placement passes (reading
// 100,000 queued jobs takes longer than a placement pass): those run
// meanwhile, and its placements are re-checked when written, as every
// placement is. The server runs it on a goroutine of its own, spaced by
// its duration; RunOnce does the same work within its placement.
// It returns how many jobs were queued.
func (c *Controller) RunWholeQueue(ctx context.Context, now time.Time) (int, error) {
	began := time.Now() // the wall clock, as lockPlacement's
	defer c.observePass(PassWholeQueue, began, began)
	p, err := c.place.Plan(placement.WithYield(ctx, c.yieldToPlacement), now, true, nil)
	if err != nil || p == nil {
		return 0, err
	}
	_, err = c.place.Apply(ctx, p)
	return p.Queued(), err
}

// placement runs the scheduler (over the whole queue when full) and the
// autoscaler.
func (c *Controller) placement(ctx context.Context, now time.Time, full bool, kind PassKind) error {
	asked, got := c.lockPlacement()
	defer c.observePass(kind, asked, got)
	defer c.unlockPlacement()
	var errs []error
	st, err := c.place.RunOnce(ctx, now, full)
	if err != nil {
		errs = append(errs, err)
	}
	if st != nil {
		c.mu.Lock()
		c.passNodes = st
		c.mu.Unlock()
	}
	if err := c.scale.RunOnce(ctx, now, st); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Wait waits for background node releases to finish (tests, shutdown).
func (c *Controller) Wait() { c.nodes.Wait() }

// ReconcileComputes moves computes through their provisioning states (the
// node loop's, control/nodes); tests call it to make a new compute ready.
func (c *Controller) ReconcileComputes(ctx context.Context) error {
	return c.nodes.ReconcileComputes(ctx)
}

// ResetLeases gives every node a fresh lease: a server start, or a
// replica taking the lead, calls it before the first pass.
// The view is read again whole: what this server knew before another
// one led is not trusted.
func (c *Controller) ResetLeases(ctx context.Context) error {
	c.view.Invalidate()
	return c.nodes.ResetLeases(ctx)
}

// AdoptNodes takes back the nodes whose agents kept running while no
// server led; it returns how many it adopted.
func (c *Controller) AdoptNodes(ctx context.Context) (int, error) { return c.nodes.AdoptNodes(ctx) }
