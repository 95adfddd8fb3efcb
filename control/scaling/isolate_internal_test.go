package scaling

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/storetest"
)

// actuator counts what it was asked per cluster and fails for bad.
type actuator struct {
	calls map[string]int
	bad   string
}

func (a *actuator) do(d autoscaler.Decision) error {
	a.calls[d.Cluster]++
	if d.Cluster == a.bad {
		return core.Errorf(core.EUNAVAILABLE, "the store refused the write")
	}
	return nil
}

func (a *actuator) ScaleUp(_ context.Context, d autoscaler.Decision) error { return a.do(d) }
func (a *actuator) Release(_ context.Context, d autoscaler.Decision) error { return a.do(d) }
func (a *actuator) Record(_ context.Context, d autoscaler.Decision) error  { return a.do(d) }

// A cluster whose decision fails is not asked again, nor its error
// returned (and logged) again, before its backoff is over; the other
// clusters' decisions are carried out on every pass.
func TestIsolatedActuatorBacksOffAFailingCluster(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := &actuator{calls: map[string]int{}, bad: "ws/bad"}
	c := &Loop{now: clock.Now()}
	a := isolated{inner: inner, c: c, b: loop.NewBackoff(0)}
	errs := 0
	pass := func() {
		for _, cl := range []string{"ws/bad", "ws/good"} {
			if err := a.ScaleUp(context.Background(), autoscaler.Decision{Cluster: cl, Action: autoscaler.ActionScaleUp}); err != nil {
				errs++
			}
		}
	}
	for range 3 {
		pass()
	}
	if inner.calls["ws/good"] != 3 || inner.calls["ws/bad"] != 1 || errs != 1 {
		t.Fatalf("calls %v, %d errors; want good every pass, bad once and one error within its wait", inner.calls, errs)
	}
	c.now = clock.Advance(loop.DefaultFirstWait)
	pass()
	if inner.calls["ws/bad"] != 2 || errs != 2 {
		t.Fatalf("calls %v, %d errors after the wait; want bad asked again", inner.calls, errs)
	}
}
