package control

// HoldPlacement takes the placement lock as a pass would and returns its
// release, so that a test can make another pass wait for it.
func (c *Controller) HoldPlacement() (release func()) {
	c.lockPlacement()
	return c.unlockPlacement
}
