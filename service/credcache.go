package service

import (
	"sync"
	"time"
)

// credCacheTTL bounds how long a node credential is trusted without a read.
// A credential is only ever withdrawn with its node (released, or lost and
// revived under a new one), and every agent request then checks the node
// and its assignment in the store, so trusting the mapping a little longer
// lets nothing through; it spares a store read per request at scale
// (10,000 nodes syncing every few seconds missed a one-second cache
// every time).
const credCacheTTL = 10 * time.Second

// credCacheMax bounds the cache: beyond it, expired entries are swept,
// and if that is not enough the cache starts over.
const credCacheMax = 100_000

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
	if c.m == nil {
		c.m = map[string]credEntry{}
	}
	if len(c.m) >= credCacheMax {
		for h, e := range c.m {
			if now.Sub(e.at) > credCacheTTL {
				delete(c.m, h)
			}
		}
		if len(c.m) >= credCacheMax {
			c.m = map[string]credEntry{}
		}
	}
	c.m[hash] = credEntry{node, now}
}
