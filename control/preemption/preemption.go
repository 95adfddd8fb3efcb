// Package preemption simulates the reclaiming of low-priority capacity:
// at each location's preemption_rate_per_hour, a low-priority node is
// preempted as a cloud would take it back, so that users rehearse what
// their checkpoints and retries do before a real cloud does it to them.
package preemption

import (
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Services is what the preemption loop needs of the request services.
// *service.Services implements it.
type Services interface {
	loop.Base
	// PreemptNodeBecause preempts a node, saying why.
	PreemptNodeBecause(ctx context.Context, workspace, compute, nodeID, reason string) error
}

// Loop preempts low-priority nodes at random, at each location's rate.
type Loop struct {
	s    Services
	rand *rand.Rand

	mu       sync.Mutex
	lastPass time.Time
}

// New returns the loop; r makes its choices (seed it to replay them).
func New(s Services, r *rand.Rand) *Loop { return &Loop{s: s, rand: r} }

// RunOnce gives each low-priority node the chance of being preempted in
// the time since the last pass: 1 - exp(-rate × hours). The first pass
// only sets the clock.
func (l *Loop) RunOnce(ctx context.Context, now time.Time) {
	l.mu.Lock()
	dt := now.Sub(l.lastPass)
	first := l.lastPass.IsZero()
	l.lastPass = now
	l.mu.Unlock()
	if first || dt <= 0 || !l.anyRate() {
		return
	}
	var nodes []*node.Node
	_ = l.s.Store().View(ctx, func(tx store.Tx) error {
		var err error
		nodes, err = tx.ListNodes(node.NodeFilter{})
		return err
	})
	for _, n := range nodes {
		if !n.LowPriority || (n.State != node.NodeIdle && n.State != node.NodeRunning) {
			continue
		}
		loc, err := l.s.Catalog().Location(n.Location)
		if err != nil || loc.PreemptionRatePerHour <= 0 {
			continue
		}
		p := 1 - math.Exp(-loc.PreemptionRatePerHour*dt.Hours())
		l.mu.Lock()
		hit := l.rand.Float64() < p
		l.mu.Unlock()
		if hit {
			reason := "low-priority capacity reclaimed (simulated at preemption_rate_per_hour " + strconv.FormatFloat(loc.PreemptionRatePerHour, 'g', -1, 64) + ")"
			if err := l.s.PreemptNodeBecause(ctx, n.Workspace, n.Compute, n.ID, reason); err != nil {
				l.s.Logger().Warn("simulated preemption failed", slog.String("node", n.ID), slog.Any("err", err))
			}
		}
	}
}

func (l *Loop) anyRate() bool {
	for _, loc := range l.s.Catalog().Locations() {
		if loc.PreemptionRatePerHour > 0 {
			return true
		}
	}
	return false
}
