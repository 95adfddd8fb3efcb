package scaling

// Block returns why the last autoscaler pass could not grow the
// cluster key, or the zero Block: the next placement pass explains the
// cluster's waiting jobs by it.
func (c *Loop) Block(key string) Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.blocked[key]
}
