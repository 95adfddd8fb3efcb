package scaling

import (
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
)

// provisionFailure is a cluster's run of failed provisionings.
type provisionFailure struct {
	count int
	until time.Time
}

// Backoff after failed provisionings: 2 s doubling to 5 minutes.
const (
	provisionBackoffMin = 2 * time.Second
	provisionBackoffMax = 5 * time.Minute
)

// provisionFailed records a failed provisioning of cluster key at now.
func (c *Loop) provisionFailed(key string, err error, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.provisionFailures == nil {
		c.provisionFailures = map[string]provisionFailure{}
	}
	f := c.provisionFailures[key]
	f.count++
	d := provisionBackoffMin
	for i := 1; i < f.count && d < provisionBackoffMax; i++ {
		d *= 2
	}
	f.until = now.Add(min(d, provisionBackoffMax))
	c.provisionFailures[key] = f
}

// provisionSucceeded ends a cluster's run of failures.
func (c *Loop) provisionSucceeded(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.provisionFailures, key)
}

// holdBackFailedProvisioning hides the queued demand of clusters whose
// provisioning failed recently, so that the autoscaler does not ask again
// before their backoff is over; everything else (releases, min_instances
// shortfalls) plans as usual.
func (c *Loop) holdBackFailedProvisioning(snap *autoscaler.Snapshot, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range snap.Clusters {
		cl := &snap.Clusters[i]
		if f, ok := c.provisionFailures[cl.Key]; ok && now.Before(f.until) {
			cl.QueuedNodeDemand = 0
			cl.MinInstances = 0
		}
	}
}
