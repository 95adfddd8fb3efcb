package live

import (
	"slices"
	"sync"
)

// Wakes wakes the long poll of a node's agent when there is news for it
// (work placed, a cancel, a drain), so that work reaches an idle node at
// once instead of on its next poll. An agent long-polls whichever replica
// it reached, while news may come from any: the leader places work, a user
// cancels through another replica. An implementation shared by replicas
// forwards wakes between them; a lost wake only delays news until the
// agent's poll times out, it never loses work (the poll reads the store).
type Wakes interface {
	// Wait returns a channel closed at the next wake of node.
	Wait(node string) <-chan struct{}
	// Wake wakes every waiter of the nodes, on every replica.
	Wake(nodes ...string)
	// Notify calls fn once at the next wake of node, unless stop is
	// called first; stop reports whether it prevented the call. It is
	// Wait without a goroutine per waiter: a server parks thousands of
	// agents' polls. fn runs in the waker's goroutine and must not
	// block.
	Notify(node string, fn func()) (stop func() bool)
}

// Hub is the in-process Wakes: the waiters of one server. It is all one
// server needs, and what a forwarding implementation wakes on each
// replica.
type Hub struct {
	mu      sync.Mutex
	waiters map[string]chan struct{}
	// notes are the Notify calls pending per node: a node has one
	// parked sync at a time, rarely two, so a slice (searched to stop
	// one) rather than a set, which cost a map per node.
	notes map[string][]*note
}

// note is one Notify: fn, called at most once.
type note struct{ fn func() }

var _ Wakes = (*Hub)(nil)

// NewHub returns a Hub without waiters.
func NewHub() *Hub {
	return &Hub{waiters: map[string]chan struct{}{}, notes: map[string][]*note{}}
}

// Notify calls fn once at the next wake of node, unless stop is called
// first; stop reports whether it prevented the call.
func (h *Hub) Notify(node string, fn func()) (stop func() bool) {
	n := &note{fn: fn}
	h.mu.Lock()
	h.notes[node] = append(h.notes[node], n)
	h.mu.Unlock()
	return func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		ns := h.notes[node]
		i := slices.Index(ns, n)
		if i < 0 {
			return false // already called
		}
		if len(ns) == 1 {
			delete(h.notes, node)
		} else {
			h.notes[node] = slices.Delete(ns, i, i+1)
		}
		return true
	}
}

// wakeLocked closes node's channel and takes its notes, whose functions
// the caller runs once h.mu is released.
func (h *Hub) wakeLocked(node string, fns []func()) []func() {
	if ch, ok := h.waiters[node]; ok {
		close(ch)
		delete(h.waiters, node)
	}
	for _, n := range h.notes[node] {
		fns = append(fns, n.fn)
	}
	delete(h.notes, node)
	return fns
}

// Wait returns a channel closed at the next wake of node.
func (h *Hub) Wait(node string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.waiters[node]
	if !ok {
		ch = make(chan struct{})
		h.waiters[node] = ch
	}
	return ch
}

// Wake wakes every waiter of the nodes in this process.
func (h *Hub) Wake(nodes ...string) {
	var fns []func()
	h.mu.Lock()
	for _, n := range nodes {
		fns = h.wakeLocked(n, fns)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// WakeAll wakes every waiter: a forwarder that lost wakes (its connection
// dropped) cannot tell whose, and a needless wake costs one sync.
func (h *Hub) WakeAll() {
	var fns []func()
	h.mu.Lock()
	for n := range h.waiters {
		fns = h.wakeLocked(n, fns)
	}
	for n := range h.notes {
		fns = h.wakeLocked(n, fns)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
