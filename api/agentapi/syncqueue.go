package agentapi

import (
	"runtime"
	"sync"
)

// syncQueue bounds the agents' syncs being computed at once. When the
// store falls behind (a loaded machine, a long pass holding its
// connections), syncs pile up waiting for it; in their handlers each
// would hold what Parking saves — net/http's buffers and two goroutines,
// about 30 KB — so one that finds every slot taken is taken from net/http
// at once and waits in this queue as a socket and a closure, to be
// computed in turn. When slots are free, a sync is computed in its
// handler as before, at no extra cost.
type syncQueue struct {
	slots   chan struct{}
	mu      sync.Mutex
	waiting []func() // each runs holding a slot, and releases it
}

// newSyncQueue returns a queue of n slots.
func newSyncQueue(n int) *syncQueue { return &syncQueue{slots: make(chan struct{}, n)} }

// defaultSyncSlots bounds the syncs being computed at once. A sync holds
// its slot while it waits for the heartbeats' group commit (one write of
// every lease gathered meanwhile), so the slots cap the syncs a second:
// 16 slots, as this was first, capped a server near 900 syncs/s (about
// 18 ms a sync on a loaded 2-core machine), and at 5,000 nodes (1,500
// heartbeats/s) leases ran out and nodes were declared lost. 256 slots
// carry over 10,000 syncs/s at that pace, and cost at most 256 handlers'
// buffers and stacks (about 8 MB) when the store falls behind.
func defaultSyncSlots() int { return 64 * max(4, runtime.GOMAXPROCS(0)) }

// maxQueuedSyncs bounds the syncs waiting for a slot; past it a sync is
// refused as unavailable (the agent retries with a backoff). Enough for
// every node of a large fleet to wait once.
const maxQueuedSyncs = 1 << 16

// tryAcquire takes a slot if one is free.
func (q *syncQueue) tryAcquire() bool {
	select {
	case q.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// release gives the slot to the first waiting sync, or frees it.
func (q *syncQueue) release() {
	q.mu.Lock()
	if len(q.waiting) > 0 {
		fn := q.waiting[0]
		q.waiting[0] = nil
		q.waiting = q.waiting[1:]
		q.mu.Unlock()
		go fn()
		return
	}
	<-q.slots
	q.mu.Unlock()
}

// enqueue runs fn holding a slot: at once if one is free, else when one
// is released.
func (q *syncQueue) enqueue(fn func()) {
	q.mu.Lock()
	if q.tryAcquire() {
		q.mu.Unlock()
		go fn()
		return
	}
	q.waiting = append(q.waiting, fn)
	q.mu.Unlock()
}

// queued counts the syncs waiting for a slot.
func (q *syncQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}
