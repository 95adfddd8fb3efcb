package app

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"runtime/debug"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/control"
)

// The controller's passes run on three goroutines while this server
// leads, so that a decision for a new job never waits behind slower work:
//
//   - full passes on a tick (leases, provisioning, instances, accounting,
//     and a placement pass);
//   - placement passes on every change, and for a job just submitted a
//     pass over its compute's queue alone (RunPlacementFor);
//   - the whole queue's pass (every waiting job's reason, backfill past
//     the heads of the queues), spaced by its own duration.
//
// A fourth goroutine queues and sends notifications (notifications.go),
// so that a receiver that hangs never holds up a decision.
//
// Placement and scaling passes take the controller's placement lock one
// at a time; the whole queue is read and scheduled without it.

// pokes is what woke the placement loop since its last pass: a change
// of any kind (a full placement pass), submissions to the computes in
// keys, or changes confined to the computes in changed (a pass over
// their queues alone).
type pokes struct {
	mu      sync.Mutex
	general bool
	keys    map[string]bool
	changed map[string]bool
}

// take returns what woke the loop and forgets it.
func (p *pokes) take() (w wakeup) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w = wakeup{general: p.general, submitted: p.keys, changed: p.changed}
	p.general, p.keys, p.changed = false, nil, nil
	return w
}

// wakeup is what one wake of the placement loop found recorded.
type wakeup struct {
	general            bool
	submitted, changed map[string]bool
}

// poke wakes the controllers for a change of any kind, without blocking.
func (m *Main) poke() {
	m.pokes.mu.Lock()
	m.pokes.general = true
	m.pokes.mu.Unlock()
	m.signal()
}

// pokeSubmitted wakes the controllers for a job submitted to the compute
// of key, without blocking.
func (m *Main) pokeSubmitted(key string) { m.pokeKey(&m.pokes.keys, key) }

// pokeChanged wakes the controllers for a change confined to the compute
// of key (a node of it joined or pre-pulled its images, a cluster
// created), without blocking.
func (m *Main) pokeChanged(key string) { m.pokeKey(&m.pokes.changed, key) }

// pokeKey records key in one of the pokes' sets and wakes the loop.
func (m *Main) pokeKey(set *map[string]bool, key string) {
	m.pokes.mu.Lock()
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[key] = true
	m.pokes.mu.Unlock()
	m.signal()
}

func (m *Main) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// minPlacementGap spaces placement passes that follow each other at once.
const minPlacementGap = 2 * time.Millisecond

// fullPassGap is how long after a full controller pass that took took the
// next one starts: a tick, or four times took when that is longer, at most
// five ticks.
func fullPassGap(tick, took time.Duration) time.Duration {
	return min(max(tick, 4*took), 5*tick)
}

// wholeQueueGap is how long after a pass over the whole queue that took
// took the next one starts: a tick, or ten times took when that is
// longer, at most 30 s. Only waiting jobs' reasons (and backfill past the
// heads of the queues) need the whole queue; reading 100,000 queued jobs
// on every tick took a quarter of a core.
func wholeQueueGap(tick, took time.Duration) time.Duration {
	return min(max(tick, 10*took), 30*time.Second)
}

// runControllers runs the controller's passes until ctx ends.
func (m *Main) runControllers(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); m.runPlacements(ctx) }()
	go func() { defer wg.Done(); m.runWholeQueue(ctx) }()
	go func() { defer wg.Done(); m.runNotifications(ctx) }()
	m.runFullPasses(ctx)
	wg.Wait()
}

// runFullPasses runs a full pass on every tick.
func (m *Main) runFullPasses(ctx context.Context) {
	for {
		// The wall clock only paces the loop (how long a pass really
		// took on this machine); what the pass decides uses the
		// injected clock's now.
		began := time.Now()
		if err := m.ctrl.RunPass(ctx, m.opts.Clock.Now(), false); err != nil && ctx.Err() == nil {
			m.log.Error("control loop pass failed", slog.Any("err", err))
		}
		if rerr := m.svc.Workload().Rotate(ctx); rerr != nil && ctx.Err() == nil {
			m.log.Error("rotating workload signing keys failed", slog.Any("err", rerr))
		}
		// The next full pass comes a tick later, or four times as long
		// as this one took if that is longer: at 10,000 nodes a full
		// pass reads every node, and five a second took half a core.
		// The spacing is capped at five ticks so that one slow pass (a
		// stalled disk) does not hold back lease expiry and scale-down
		// for long.
		if !sleepCtx(ctx, fullPassGap(m.opts.TickInterval, time.Since(began))) {
			return
		}
	}
}

// runPlacements runs a placement pass on every change that may place
// something: over the heads of every queue, or, when only jobs were
// submitted or only some computes changed (a node joined) since the last
// pass, over their computes' queues alone.
func (m *Main) runPlacements(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		w := m.pokes.take()
		var errs []error
		for _, kind := range placementPasses(w) {
			switch kind {
			case control.PassSubmitted:
				// The computes whose change is theirs alone ride along.
				keys := w.submitted
				if len(w.changed) > 0 {
					keys = maps.Clone(w.submitted)
					maps.Copy(keys, w.changed)
				}
				errs = append(errs, m.ctrl.RunPlacementFor(ctx, m.opts.Clock.Now(), keys))
			case control.PassComputes:
				errs = append(errs, m.ctrl.RunPlacementForChanged(ctx, m.opts.Clock.Now(), w.changed))
			default:
				errs = append(errs, m.ctrl.RunPlacement(ctx, m.opts.Clock.Now()))
			}
		}
		if err := errors.Join(errs...); err != nil && ctx.Err() == nil {
			m.log.Error("placement pass failed", slog.Any("err", err))
		}
		// Back-to-back placement passes are spaced by minPlacementGap so
		// that under load one pass serves every change that arrived in
		// between; an idle server still reacts at once.
		if !sleepCtx(ctx, minPlacementGap) {
			return
		}
	}
}

// placementPasses are the passes a wake of the placement loop runs, in
// order: for jobs just submitted, a pass over their computes' queues
// alone, first (with the computes whose change is theirs alone: one pass
// serves both); for a change of any kind (general, or a wake with
// nothing recorded), a pass over the heads of every queue; else, for
// changes confined to some computes, a pass over theirs alone (the pass
// over every queue covers them). New jobs' decisions go first because
// the pass over every queue costs several times more, and they waited
// for it when it ran for both.
func placementPasses(w wakeup) []control.PassKind {
	var passes []control.PassKind
	if len(w.submitted) > 0 {
		passes = append(passes, control.PassSubmitted)
	}
	switch {
	case w.general || len(w.submitted) == 0 && len(w.changed) == 0:
		passes = append(passes, control.PassChanges)
	case len(w.changed) > 0 && len(w.submitted) == 0:
		passes = append(passes, control.PassComputes)
	}
	return passes
}

// runWholeQueue reads the whole queue (reasons, backfill) again and
// again, spaced by wholeQueueGap.
func (m *Main) runWholeQueue(ctx context.Context) {
	for {
		// Pacing only, as in runFullPasses.
		began := time.Now()
		queued, err := m.ctrl.RunWholeQueue(ctx, m.opts.Clock.Now())
		if err != nil && ctx.Err() == nil {
			m.log.Error("whole-queue pass failed", slog.Any("err", err))
		}
		if queued >= freeAfterQueue {
			// The pass held the whole queue (about 300 bytes a job) and
			// the collector let the heap grow to twice that beside what
			// stays; the runtime would keep those pages for minutes.
			// Given back at once, a server with 100,000 queued jobs and
			// 10,000 nodes stays near what it needs between passes. A
			// forced collection per pass, at most one every few
			// seconds, costs about what the pass's own collections do.
			debug.FreeOSMemory()
		}
		if !sleepCtx(ctx, wholeQueueGap(m.opts.TickInterval, time.Since(began))) {
			return
		}
	}
}

// freeAfterQueue is the queue length past which the whole queue's pass
// returns its memory to the operating system once it ends.
const freeAfterQueue = 20_000

// sleepCtx sleeps for d or until ctx ends; it reports whether ctx is
// still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
