package coretest

import (
	"sync"
	"time"
)

// Clock is a core.Clock that tells the time it is set to, for tests of
// anything that takes the injected clock (the store's, the agent's). It is
// safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock set to t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the time the clock is set to.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set sets the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}
