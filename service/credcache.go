package service

import (
	"sync"
	"time"
)

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
