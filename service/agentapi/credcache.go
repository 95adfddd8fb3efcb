package agentapi

import (
	"sync"
	"time"
)

// credCacheTTL is the least time a node credential is trusted without a
// read. A credential is withdrawn in two ways: with its node (released or
// lost), after which every agent request fails at its first read of the
// node, so trusting the mapping a little longer lets nothing through; or
// replaced when the node joins again (a revived node's new agent), which
// the server that sees the join records here, so the old credential stops
// there at once. It spares a store read per request at scale (10,000
// nodes syncing every few seconds missed a one-second cache every time).
const credCacheTTL = 10 * time.Second

// credCacheMaxTTL is the most: the time another server of a highly
// available set may go on trusting a credential replaced by a join it did
// not see (the agent routes act for the node by its ID, so an old agent
// still alive could act for it until then).
const credCacheMaxTTL = time.Minute

// credTTL is how long a credential read now is trusted while the granted
// lease is lease: the lease, within [credCacheTTL, credCacheMaxTTL].
// Agents sync every third of their lease, so a fleet whose lease grew
// past 10 s (decide/nodelease: 30 s at 10,000 nodes) missed a 10 s cache
// on every sync, a store read each, 1,000 a second; up to a minute the
// lease is kept, and past it a fleet's syncs read again (at the pace
// max_heartbeats_per_second holds them to).
func credTTL(lease time.Duration) time.Duration {
	return min(max(credCacheTTL, lease), credCacheMaxTTL)
}

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
	// at is when the credential was read; until, when it stops being
	// trusted (at plus the TTL then: a lease that grows later does not
	// make an old read fresh again).
	at, until time.Time
}

// get returns the node of a credential hash whose read is still trusted
// at now and that is still its node's latest. A now before the read (the
// clock stepped back) is a miss, so that a step back cannot stretch the
// trust.
func (c *credCache) get(hash string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || now.Before(e.at) || now.After(e.until) || c.cur[e.node] != hash {
		return "", false
	}
	return e.node, true
}

// put records hash, read at now, as node's latest credential, trusted for
// ttl; it retires any earlier one at once. A read older than the one that
// made another hash node's latest (a join recorded meanwhile) records
// nothing: the credential the join retired must not come back. A full
// cache first drops the entries no longer trusted.
func (c *credCache) put(hash, node string, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.cur = map[string]credEntry{}, map[string]string{}
	}
	if cur, ok := c.cur[node]; ok && cur != hash {
		if e, ok := c.m[cur]; ok && e.at.After(now) {
			return
		}
	}
	if len(c.m) >= credCacheMax {
		for h, e := range c.m {
			if now.Before(e.at) || now.After(e.until) {
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
	c.m[hash] = credEntry{node: node, at: now, until: now.Add(ttl)}
	c.cur[node] = hash
}

// renew records a read of node, begun at now, that found it holding
// hash (a sync reads its node anyway). When hash is node's latest here,
// it is trusted again from now, for ttl. When node's latest here is
// another hash, that one is dropped: the store names a different
// credential, and the one cached is read again before it is trusted
// (an old agent's credential, replaced on another server, stops at its
// next request instead of when its entry expires). renew never makes a
// hash the latest: a read that began before a join must not bring back
// the credential that join retired.
func (c *credCache) renew(hash, node string, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.cur[node]
	switch {
	case !ok || hash == "":
	case cur != hash:
		delete(c.m, cur)
		delete(c.cur, node)
	default:
		if e, ok := c.m[hash]; ok && e.node == node && !now.Before(e.at) {
			c.m[hash] = credEntry{node: node, at: now, until: now.Add(ttl)}
		}
	}
}
