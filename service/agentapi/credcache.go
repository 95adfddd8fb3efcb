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
//
// It is the longer of 10 s and the lease agents are granted
// (credTTL): agents sync every third of their lease, so a fleet whose
// lease grew past 10 s (decide/nodelease: 30 s at 10,000 nodes) missed a
// 10 s cache on every sync, a store read each, 1,000 a second. No longer
// is unsafe for the same reason 10 s was: a node is declared lost, and
// revived with a new credential on whatever server, only after a silence
// longer than its lease, by which time the cached entry (dated from its
// last read, never from a hit) has expired on every server.
const credCacheTTL = 10 * time.Second

// credTTL is how long a credential is trusted without a read while the
// granted lease is lease.
func credTTL(lease time.Duration) time.Duration { return max(credCacheTTL, lease) }

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

// get returns the node of a credential hash read within ttl that is
// still its node's latest.
func (c *credCache) get(hash string, now time.Time, ttl time.Duration) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || now.Sub(e.at) > ttl || c.cur[e.node] != hash {
		return "", false
	}
	return e.node, true
}

// put records hash as node's latest credential, which retires any earlier
// one at once; a full cache first drops the entries older than ttl.
func (c *credCache) put(hash, node string, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.cur = map[string]credEntry{}, map[string]string{}
	}
	if len(c.m) >= credCacheMax {
		for h, e := range c.m {
			if now.Sub(e.at) > ttl {
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
