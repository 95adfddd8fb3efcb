package live

import "sync"

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
}

// Hub is the in-process Wakes: the waiters of one server. It is all one
// server needs, and what a forwarding implementation wakes on each
// replica.
type Hub struct {
	mu      sync.Mutex
	waiters map[string]chan struct{}
}

var _ Wakes = (*Hub)(nil)

// NewHub returns a Hub without waiters.
func NewHub() *Hub { return &Hub{waiters: map[string]chan struct{}{}} }

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
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range nodes {
		if ch, ok := h.waiters[n]; ok {
			close(ch)
			delete(h.waiters, n)
		}
	}
}

// WakeAll wakes every waiter: a forwarder that lost wakes (its connection
// dropped) cannot tell whose, and a needless wake costs one sync.
func (h *Hub) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for n, ch := range h.waiters {
		close(ch)
		delete(h.waiters, n)
	}
}
