package service

import (
	"sync"
	"time"
)

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

// credCacheTTL bounds how long a node credential is trusted without a read.
const credCacheTTL = time.Second

// credCache remembers which node a credential hash belonged to.
type credCache struct {
	mu sync.Mutex
	m  map[string]credEntry
}

type credEntry struct {
	node string
	at   time.Time
}

func (c *credCache) get(hash string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || now.Sub(e.at) > credCacheTTL {
		return "", false
	}
	return e.node, true
}

func (c *credCache) put(hash, node string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[string]credEntry{}
	}
	c.m[hash] = credEntry{node, now}
}
