package nodelease

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTTLGrowsWithTheFleetAboveTheConfiguredLease(t *testing.T) {
	min := 10 * time.Second
	for _, tt := range []struct {
		nodes int
		rate  float64
		want  time.Duration
	}{
		{0, 1000, min},
		{100, 1000, min},
		{3333, 1000, min},              // 9.999 s: the configured lease
		{3334, 1000, 11 * time.Second}, // rounded up to whole seconds
		{10000, 1000, 30 * time.Second},
		{20000, 1000, 60 * time.Second},
		{10000, 0, min},  // never stretched
		{10000, -1, min}, // never stretched
		{100_000_000, 1, time.Hour},
	} {
		if got := TTL(tt.nodes, min, tt.rate); got != tt.want {
			t.Errorf("TTL(%d nodes, %v/s) = %v, want %v", tt.nodes, tt.rate, got, tt.want)
		}
		if got := TTL(tt.nodes, min, tt.rate); tt.rate > 0 && float64(tt.nodes)*syncsPerLease/got.Seconds() > tt.rate && got < time.Hour {
			t.Errorf("TTL(%d nodes, %v/s) = %v lets the fleet sync %.0f times a second", tt.nodes, tt.rate, got, float64(tt.nodes)*syncsPerLease/got.Seconds())
		}
	}
}

// fleet is a count the test sets, counting its calls.
type fleet struct {
	nodes, calls int
	err          error
}

func (f *fleet) count(context.Context) (int, error) {
	f.calls++
	return f.nodes, f.err
}

func TestKeeperCountsEveryFewSecondsAndGrantsTheFleetsLease(t *testing.T) {
	ctx := context.Background()
	f := &fleet{nodes: 10000}
	k := New(Config{Min: 10 * time.Second, MaxRate: 1000, Count: f.count})
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if got := k.Grant(ctx, t0); got != 30*time.Second {
		t.Fatalf("Grant at 10,000 nodes = %v, want 30s", got)
	}
	f.nodes = 20000
	if got := k.Grant(ctx, t0.Add(RefreshEvery-time.Millisecond)); got != 30*time.Second || f.calls != 1 {
		t.Fatalf("Grant before RefreshEvery = %v after %d counts, want 30s after 1", got, f.calls)
	}
	if got := k.Grant(ctx, t0.Add(RefreshEvery)); got != 60*time.Second || f.calls != 2 {
		t.Fatalf("Grant after RefreshEvery = %v after %d counts, want 60s after 2", got, f.calls)
	}
	// A failed count keeps the lease.
	f.err = errors.New("store down")
	f.nodes = 10
	if got := k.Grant(ctx, t0.Add(2*RefreshEvery)); got != 60*time.Second {
		t.Fatalf("Grant after a failed count = %v, want 60s kept", got)
	}
}

// A fleet that shrinks is granted the short lease at once, but a node
// told the long one is judged by it for one long lease more: it may not
// sync again before then.
func TestKeeperJudgesSilenceByTheLongerLeaseAfterTheFleetShrinks(t *testing.T) {
	ctx := context.Background()
	f := &fleet{nodes: 20000}
	k := New(Config{Min: 10 * time.Second, MaxRate: 1000, Count: f.count})
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	k.Grant(ctx, t0)
	f.nodes = 100
	shrank := t0.Add(RefreshEvery)
	if got := k.Grant(ctx, shrank); got != 10*time.Second {
		t.Fatalf("Grant after shrinking = %v, want 10s", got)
	}
	if got := k.Expiry(ctx, shrank.Add(59*time.Second)); got != 60*time.Second {
		t.Fatalf("Expiry 59 s after shrinking = %v, want the 60s granted before", got)
	}
	if got := k.Expiry(ctx, shrank.Add(60*time.Second)); got != 10*time.Second {
		t.Fatalf("Expiry a lease after shrinking = %v, want 10s", got)
	}
	// Shrinking in two steps holds the longest.
	f.nodes = 20000
	t1 := shrank.Add(2 * time.Minute)
	k.Grant(ctx, t1)
	f.nodes = 10000
	k.Grant(ctx, t1.Add(RefreshEvery))
	f.nodes = 100
	k.Grant(ctx, t1.Add(2*RefreshEvery))
	if got := k.Expiry(ctx, t1.Add(RefreshEvery+59*time.Second)); got != 60*time.Second {
		t.Fatalf("Expiry after two steps down = %v, want the 60s of the first", got)
	}
}

func TestKeeperWithoutARateKeepsTheConfiguredLease(t *testing.T) {
	f := &fleet{nodes: 50000}
	k := New(Config{Min: 10 * time.Second, MaxRate: -1, Count: f.count})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if got := k.Grant(context.Background(), now); got != 10*time.Second || f.calls != 0 {
		t.Fatalf("Grant with no rate = %v after %d counts, want 10s and no count", got, f.calls)
	}
	if got := k.Expiry(context.Background(), now); got != 10*time.Second {
		t.Fatalf("Expiry with no rate = %v, want 10s", got)
	}
}

// A keeper that has never counted its fleet judges no silence: another
// server may have told agents a long lease.
func TestKeeperThatNeverCountedJudgesNoSilence(t *testing.T) {
	f := &fleet{nodes: 10, err: errors.New("store down")}
	k := New(Config{Min: 10 * time.Second, MaxRate: 1000, Count: f.count})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if got := k.Expiry(context.Background(), now); got != time.Hour {
		t.Fatalf("Expiry before any count = %v, want an hour", got)
	}
	if got := k.Grant(context.Background(), now); got != 10*time.Second {
		t.Fatalf("Grant before any count = %v, want the configured 10s", got)
	}
	f.err = nil
	if got := k.Expiry(context.Background(), now.Add(RefreshEvery)); got != 10*time.Second {
		t.Fatalf("Expiry once counted = %v, want 10s", got)
	}
}
