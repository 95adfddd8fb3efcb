package agentapi

import (
	"sync"
	"time"
)

// credCacheTTL bounds how long a node credential is trusted without a read.
// A credential is withdrawn in two ways: with its node (released or lost),
// after which every agent request fails at its first read of the node, so
// trusting the mapping a little longer lets nothing through; or replaced
// when the node joins again (a revived node's new agent), which this server
// sees and records here, so the old credential stops at once. It spares a
// store read per request at scale (10,000 nodes syncing every few seconds
// missed a one-second cache every time).
const credCacheTTL = 10 * time.Second

// credCacheMax bounds the cache: beyond it, expired entries are swept,
// and if that is not enough the cache starts over.
const credCacheMax = 100_000

// credCache remembers which node a credential hash belonged to.
type credCache struct {
	mu  sync.Mutex
	m   map[string]credEntry
	cur map[string]string // node ID → the hash of its latest credential
}

type credEntry struct {
	node string
	at   time.Time
}

// get returns the node of a credential hash seen within the TTL that is
// still its node's latest.
func (c *credCache) get(hash string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || now.Sub(e.at) > credCacheTTL || c.cur[e.node] != hash {
		return "", false
	}
	return e.node, true
}

// put records hash as node's latest credential, which retires any earlier
// one at once.
func (c *credCache) put(hash, node string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.cur = map[string]credEntry{}, map[string]string{}
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
		// The latest credential of a node whose entry is gone is read
		// again when next used.
		for id, h := range c.cur {
			if _, ok := c.m[h]; !ok {
				delete(c.cur, id)
			}
		}
	}
	c.m[hash] = credEntry{node, now}
	c.cur[node] = hash
}
