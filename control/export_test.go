package control

import "time"

// HoldPlacement takes the placement lock as a pass would and returns its
// release, so that a test can make another pass wait for it.
func (c *Controller) HoldPlacement() (release func()) {
	c.placeMu.Lock()
	return c.placeMu.Unlock
}

// Submitting marks a pass for submitted jobs as asked for (n 1) or done
// (n -1), as RunPlacementFor does.
func (c *Controller) Submitting(n int32) { c.submitting.Add(n) }

// YieldToSubmissions is what a pass over the whole queue calls between
// two pages, pausing for at most limit.
func (c *Controller) YieldToSubmissions(limit time.Duration) {
	c.yieldFor = limit
	c.yieldToSubmissions()
}
