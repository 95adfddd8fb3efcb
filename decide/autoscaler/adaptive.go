package autoscaler

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// IdlePolicy decides how long an idle node is kept. Fixed is the
// cluster's idle_time_before_scale_down; with Adaptive, the timeout is
// chosen from the cluster's recent arrivals, in the spirit of the hybrid
// histogram keep-alive policy of "Serverless in the Wild" (Shahrad et al.,
// USENIX ATC 2020), adapted to nodes that take ProvisionDelay to come up.
//
// The choice, per idle episode: keeping a node W longer costs its price
// for as long as it stays idle, E[min(G, W)], where G is the time to the
// next arrival (estimated by the recent gaps between arrivals); releasing
// it costs, when the next job comes after W (probability P(G > W)), a new
// node's provisioning (ProvisionDelay of node time) and that job's wait
// (ProvisionDelay at WaitCostPerHour). The policy keeps the node for the W,
// among the observed gaps, that minimises the sum.
type IdlePolicy struct {
	Fixed    time.Duration
	Adaptive bool
	// ProvisionDelay is how long a new node takes to be ready.
	ProvisionDelay time.Duration
	// NodePricePerHour is a node's price; 0 counts in node-hours.
	NodePricePerHour float64
	// WaitCostPerHour is what an hour of a waiting job is worth, in the
	// same money; 0 takes DefaultWaitCostRatio × NodePricePerHour.
	WaitCostPerHour float64
}

// DefaultWaitCostRatio prices an hour of a waiting job at this multiple
// of an hour of the node it waits for, when wait_cost_per_hour is not set
// (chosen on the Alibaba GPU 2023 trace, where it beats the fixed 120 s
// default on both node-hours and mean wait; see docs/guides/idle-timeouts.md).
const DefaultWaitCostRatio = 1.5

// AdaptiveHistory is how many of a cluster's most recent arrivals the
// adaptive policy estimates from: recent enough to follow the day's
// rhythm, enough to estimate from.
const AdaptiveHistory = 100

// MinArrivals is how many recent arrivals the adaptive policy needs
// before it trusts them; until then the fixed timeout applies.
const MinArrivals = 10

// AdaptiveMargin stretches the chosen window by this fraction.
const AdaptiveMargin = 0.05

// MaxAdaptiveIdle caps the adaptive timeout.
const MaxAdaptiveIdle = 24 * time.Hour

// choice is the adaptive policy's decision and what it rests on.
type choice struct {
	window time.Duration
	// within is P(G ≤ window): the chance the next job comes in time.
	within float64
	ok     bool
}

// choose picks the keep window of an idle node from recent arrivals: the
// node that went idle at since and is the rank-th in line for the next
// jobs (the scheduler takes the node idle longest first) is needed when
// rank more jobs arrive. Its wait is estimated by the recent spans of rank
// consecutive arrivals, less the time already elapsed since the last
// arrival when it went idle (the spans still open then).
func (p *IdlePolicy) choose(arrivals []time.Time, since time.Time, rank int) choice {
	if len(arrivals) < MinArrivals {
		return choice{}
	}
	rank = max(rank, 1)
	var elapsed time.Duration
	if i, _ := slices.BinarySearchFunc(arrivals, since, func(a, t time.Time) int { return a.Compare(t) }); i > 0 {
		elapsed = since.Sub(arrivals[i-1])
		if i < len(arrivals) && arrivals[i].Equal(since) {
			elapsed = 0
		}
	}
	var spans, open []float64
	for i := 0; i+rank < len(arrivals); i++ {
		g := max(arrivals[i+rank].Sub(arrivals[i]), 0)
		spans = append(spans, g.Hours())
		if g > elapsed {
			open = append(open, (g - elapsed).Hours())
		}
	}
	if len(open) >= MinArrivals/2 {
		spans = open
	}
	if len(spans) == 0 {
		return choice{}
	}
	slices.Sort(spans)
	n := float64(len(spans))
	ratio := DefaultWaitCostRatio
	if p.NodePricePerHour > 0 && p.WaitCostPerHour > 0 {
		ratio = p.WaitCostPerHour / p.NodePricePerHour
	}
	// In node-hours: a miss costs the provisioning and the wait.
	miss := p.ProvisionDelay.Hours() * (1 + ratio)
	best, bestW, bestWithin := math.Inf(1), 0.0, 0.0
	below := 0.0 // sum of the spans ≤ W
	for i := 0; i <= len(spans); i++ {
		w := 0.0
		if i > 0 {
			w = spans[i-1]
			below += w
		}
		if w > MaxAdaptiveIdle.Hours() {
			break
		}
		above := n - float64(i)
		cost := (below+w*above)/n + above/n*miss
		if cost < best-1e-12 {
			best, bestW, bestWithin = cost, w, float64(i)/n
		}
	}
	// A little past the span chosen, so that a job coming as often as the
	// last ones did (a periodic one, say) still finds the node.
	bestW *= 1 + AdaptiveMargin
	return choice{window: time.Duration(bestW * float64(time.Hour)).Round(time.Second), within: bestWithin, ok: true}
}

// Threshold is the fixed idle timeout of c (the adaptive policy's
// fallback too).
func (p *IdlePolicy) Threshold(c Cluster, now time.Time) time.Duration {
	if p != nil {
		return max(p.Fixed, 0)
	}
	return max(c.IdleTimeBeforeScaleDown, 0)
}

// NodeThreshold is how long idle node n, rank-th in line for the next
// jobs, is kept: the fixed timeout, or the adaptive policy's window.
func (p *IdlePolicy) NodeThreshold(c Cluster, n Node, rank int) time.Duration {
	if p == nil || !p.Adaptive {
		return p.Threshold(c, time.Time{})
	}
	base, _ := idleBase(n)
	if ch := p.choose(c.RecentArrivals, base, rank); ch.ok {
		return ch.window
	}
	return max(p.Fixed, 0)
}

// keptReason says why the adaptive policy keeps an idle node.
func (p *IdlePolicy) keptReason(n Node, rank int, idleFor time.Duration, c Cluster) string {
	base, _ := idleBase(n)
	ch := p.choose(c.RecentArrivals, base, rank)
	return fmt.Sprintf("node %s kept idle %s: %.0f %% chance of a job within %s, provisioning takes %s",
		n.ID, roundD(idleFor), 100*ch.within, roundD(ch.window), roundD(p.ProvisionDelay))
}

// releaseReason says why the adaptive policy releases an idle node.
func (p *IdlePolicy) releaseReason(n Node, rank int, idleFor time.Duration, c Cluster) string {
	base, _ := idleBase(n)
	ch := p.choose(c.RecentArrivals, base, rank)
	if !ch.ok {
		return fmt.Sprintf("node %s idle %s ≥ %s (adaptive, %d recent arrivals are too few to predict from): released",
			n.ID, roundD(idleFor), roundD(p.Fixed), len(c.RecentArrivals))
	}
	return fmt.Sprintf("node %s idle %s ≥ %s: released (adaptive: only %.0f %% chance of a job within %s more, provisioning takes %s)",
		n.ID, roundD(idleFor), roundD(ch.window), 100*ch.within, roundD(ch.window), roundD(p.ProvisionDelay))
}

func roundD(d time.Duration) time.Duration { return d.Round(time.Second) }
