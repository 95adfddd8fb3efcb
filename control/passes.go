package control

import (
	"runtime"
	"time"
)

// PassKind names a placement pass by what started it, for the pass
// observer (and the metrics an operator reads to see what a new job's
// decision waited for).
type PassKind string

// The placement passes the server runs.
const (
	// PassFull is the placement inside a full controller pass (a tick).
	PassFull PassKind = "full"
	// PassChanges is a placement pass over the heads of every queue,
	// run on a change (a compute changed, an instance deleted, a rank
	// ended by the server itself).
	PassChanges PassKind = "changes"
	// PassSubmitted is a pass over the queues of computes that jobs
	// were just submitted to, alone: a new job's decision.
	PassSubmitted PassKind = "submitted"
	// PassComputes is a pass over the queues of computes whose change
	// touches nothing else (a node of theirs joined or freed with no
	// next job, a job queued again, a cluster created or deleted, a node
	// released: the computes its quota was shared with), alone.
	PassComputes PassKind = "computes"
	// PassWholeQueue reads the whole queue (every waiting job's reason,
	// backfill); it takes no placement lock.
	PassWholeQueue PassKind = "whole_queue"
)

// PassObserver is told of each placement pass once it ends: how long it
// waited for the placement lock (another pass held it) and how long it
// ran after. It is called on the pass's goroutine and must not block.
type PassObserver func(kind PassKind, waited, ran time.Duration)

// SetPassObserver sets the observer of placement passes (nil: none).
// Call it before the passes start.
func (c *Controller) SetPassObserver(o PassObserver) { c.observe = o }

// lockPlacement takes the placement lock and returns the time it was
// taken, for observePass. The wall clock measures here, not the injected
// one: this is how long the machine really made the pass wait, which a
// fake clock in a test does not advance.
func (c *Controller) lockPlacement() (asked, got time.Time) {
	asked = time.Now()
	c.placing.Add(1)
	c.placeMu.Lock()
	return asked, time.Now()
}

// unlockPlacement releases what lockPlacement took.
func (c *Controller) unlockPlacement() {
	c.placeMu.Unlock()
	c.placing.Add(-1)
}

// yieldToPlacement waits while placement passes wait for the placement
// lock or hold it: a pass over the whole queue, which takes no lock,
// calls it between its pages (placement.WithYield), so that a new job's
// decision does not share the server's core with it. It holds nothing
// the placement passes need.
func (c *Controller) yieldToPlacement() {
	for c.placing.Load() > 0 {
		// Behind the pass that holds the lock; a pass that has not
		// taken it yet is given the processor.
		// (An empty section: waiting for the holder is the point.)
		c.placeMu.Lock()
		c.placeMu.Unlock()
		runtime.Gosched()
	}
}

// observePass reports a pass that asked for the lock at asked and got it
// at got, ending now.
func (c *Controller) observePass(kind PassKind, asked, got time.Time) {
	if c.observe != nil {
		c.observe(kind, got.Sub(asked), time.Since(got))
	}
}
