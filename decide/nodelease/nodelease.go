// Package nodelease sizes a node's lease to the fleet, so that the
// agents' syncs, which renew it, stay within what a server can answer.
//
// An agent syncs every third of its lease. With a fixed lease of 10 s a
// fleet of 10,000 nodes syncs 3,000 times a second, and on one core that
// was the whole server (bench/scale: 0.95 cores, scale-up decisions at
// 2.9 s p99, docs/internals/reliability.md). As Nomad does (its
// max_heartbeats_per_second), the lease grows with the fleet: it is the
// configured lease (node_lease) or, when longer, what keeps the fleet's
// syncs at or under MaxRate a second (max_heartbeats_per_second). A
// small fleet keeps the configured lease and its quick loss detection; a
// large one trades some of it (30 s of lease at 10,000 nodes and 1,000
// syncs a second) for a server that still decides in time.
//
// The lease an agent is told (Grant) is read again on every sync, so a
// fleet that grows or shrinks moves every agent to the new pace within
// one interval. A node's silence is judged (Expiry) by the longest lease
// granted within the last such lease, so a node told the longer one
// before the fleet shrank is not declared lost for keeping to it.
package nodelease

import (
	"context"
	"math"
	"sync"
	"time"
)

// DefaultMaxRate is the fleet's syncs a second a lease is sized for when
// the config sets none (max_heartbeats_per_second): about a third of
// what one core answered at 10,000 nodes (2,400 a second, saturated).
const DefaultMaxRate = 1000

// RefreshEvery is how often a Keeper counts the fleet again.
const RefreshEvery = 5 * time.Second

// maxLease bounds a stretched lease (a fleet of 1,200,000 at the default
// rate): a lost node is noticed within an hour whatever the fleet.
const maxLease = time.Hour

// Syncs per lease: an agent syncs every third of its lease (the
// heartbeat interval), so that two missed syncs still leave it time.
const syncsPerLease = 3

// Interval is how often an agent holding lease syncs.
func Interval(lease time.Duration) time.Duration { return lease / syncsPerLease }

// TTL is the lease for a fleet of nodes: min, or the lease that keeps
// nodes × syncsPerLease / lease at or under maxRate syncs a second when
// that is longer. A maxRate of zero or less never stretches it.
func TTL(nodes int, min time.Duration, maxRate float64) time.Duration {
	if maxRate <= 0 || nodes <= 0 || math.IsNaN(maxRate) || math.IsInf(maxRate, 0) {
		return min
	}
	// Whole seconds, rounded up: the rate stays at or under maxRate.
	secs := math.Ceil(float64(nodes) * syncsPerLease / maxRate)
	if secs > maxLease.Seconds() {
		return max(min, maxLease)
	}
	return max(min, time.Duration(secs)*time.Second)
}

// Config configures a Keeper.
type Config struct {
	// Min is the configured lease (node_lease), the shortest granted.
	Min time.Duration
	// MaxRate is the fleet's syncs a second the lease is sized for; zero
	// or less keeps Min whatever the fleet.
	MaxRate float64
	// Count counts the fleet (store.Tx.CountNodes in a read).
	Count func(ctx context.Context) (int, error)
}

// Keeper holds the lease for the fleet as last counted. It is safe for
// concurrent use; the time of every call is the caller's (an injected
// clock), never its own.
type Keeper struct {
	cfg Config

	mu       sync.Mutex
	ttl      time.Duration // the lease granted now
	held     time.Duration // a longer lease granted before, judged by until heldTill
	heldTill time.Time
	counted  time.Time // when the fleet was last counted (zero: never)
	counting bool      // a count is under way in another caller
	known    bool      // a count has succeeded
}

// New returns a Keeper that grants cfg.Min until it has counted.
func New(cfg Config) *Keeper {
	return &Keeper{cfg: cfg, ttl: cfg.Min}
}

// Grant is the lease an agent is told at now: its heartbeat interval is
// a third of it. It counts the fleet first when the count is older than
// RefreshEvery (one caller counts; the others take the lease as it is).
func (k *Keeper) Grant(ctx context.Context, now time.Time) time.Duration {
	k.refresh(ctx, now)
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ttl
}

// Expiry is the lease a node's silence is judged by at now: the lease
// granted now, or a longer one granted within the last of it.
func (k *Keeper) Expiry(ctx context.Context, now time.Time) time.Duration {
	k.refresh(ctx, now)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cfg.Count != nil && k.cfg.MaxRate > 0 && !k.known {
		// The fleet has never been counted here (a server that took
		// the lead while its store fails): agents may have been told a
		// long lease by another server, and none is judged by a
		// shorter one.
		return maxLease
	}
	if now.Before(k.heldTill) && k.held > k.ttl {
		return k.held
	}
	return k.ttl
}

// refresh counts the fleet when the last count is older than
// RefreshEvery and sets the lease from it: lazily, from whichever caller
// asks first (an agent's sync or the node loop), not in a loop of its
// own. A failed count keeps the
// lease as it was (and is tried again at the next call after
// RefreshEvery).
func (k *Keeper) refresh(ctx context.Context, now time.Time) {
	if k.cfg.Count == nil || k.cfg.MaxRate <= 0 {
		return
	}
	k.mu.Lock()
	if k.counting || (!k.counted.IsZero() && now.Sub(k.counted) < RefreshEvery) {
		k.mu.Unlock()
		return
	}
	k.counting = true
	k.mu.Unlock()
	n, err := k.cfg.Count(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.counting = false
	k.counted = now
	if err != nil {
		return
	}
	k.known = true
	next := TTL(n, k.cfg.Min, k.cfg.MaxRate)
	if next < k.ttl {
		// Agents told the longer lease keep to it until their next
		// sync, at most a third of it away: their silence is judged by
		// it for one whole lease more (or by a longer one still held).
		if now.Before(k.heldTill) && k.held >= k.ttl {
			k.heldTill = later(k.heldTill, now.Add(k.ttl))
		} else {
			k.held, k.heldTill = k.ttl, now.Add(k.ttl)
		}
	}
	k.ttl = next
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
