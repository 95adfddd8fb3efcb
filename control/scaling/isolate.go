package scaling

import (
	"context"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/decide/autoscaler"
)

// isolated carries the autoscaler's decisions out through inner, one
// cluster's failure its own: a decision that failed for a cluster is not
// carried out again for it (nor its error returned, so logged, again)
// before its backoff is over, and the pass goes on with the other
// clusters, as the autoscaler does. A provisioning the provider refused
// has its own, longer backoff (provision_backoff.go); this one is for
// the store's and the actuator's failures, which were returned, and
// logged, on every pass while they lasted.
type isolated struct {
	inner autoscaler.Actuator
	c     *Loop
	b     *loop.Backoff
}

func (a isolated) do(d autoscaler.Decision, fn func() error) error {
	key := d.Cluster + "#" + string(d.Action)
	a.c.mu.Lock()
	now := a.c.now
	a.c.mu.Unlock()
	if !a.b.Due(key, now) {
		return nil
	}
	if err := fn(); err != nil {
		f := a.b.Failed(key, now, err)
		return loop.Context(err, "%s", f.Reason(string(d.Action)))
	}
	a.b.Succeeded(key)
	return nil
}

// ScaleUp is inner's, isolated.
func (a isolated) ScaleUp(ctx context.Context, d autoscaler.Decision) error {
	return a.do(d, func() error { return a.inner.ScaleUp(ctx, d) })
}

// Release is inner's, isolated.
func (a isolated) Release(ctx context.Context, d autoscaler.Decision) error {
	return a.do(d, func() error { return a.inner.Release(ctx, d) })
}

// Record is inner's, isolated.
func (a isolated) Record(ctx context.Context, d autoscaler.Decision) error {
	return a.do(d, func() error { return a.inner.Record(ctx, d) })
}
