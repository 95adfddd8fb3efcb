package service

import "sync"

// nodeHub wakes the long-poll of a node's agent when there is news for it
// (new work, a cancel, a drain), so work reaches an idle node at once
// instead of on its next poll.
type nodeHub struct {
	mu      sync.Mutex
	waiters map[string]chan struct{}
}

func newNodeHub() *nodeHub { return &nodeHub{waiters: map[string]chan struct{}{}} }

// wait returns a channel closed at the next wake of node.
func (h *nodeHub) wait(node string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.waiters[node]
	if !ok {
		ch = make(chan struct{})
		h.waiters[node] = ch
	}
	return ch
}

// wake wakes every waiter of the nodes.
func (h *nodeHub) wake(nodes ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range nodes {
		if ch, ok := h.waiters[n]; ok {
			close(ch)
			delete(h.waiters, n)
		}
	}
}
