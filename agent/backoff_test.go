package agent

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestBackoffDoublesToTheCapWithJitterAndResets(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    float64
	}{{"no jitter drawn", 0}, {"half jitter", 0.5}, {"full jitter", 0.999999}} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBackoff(MinRetryInterval, MaxRetryInterval, func() float64 { return tc.r })
			nominal := MinRetryInterval
			for i := 0; i < 12; i++ {
				got := b.next()
				lo, hi := nominal/2, nominal
				if got < lo || got > hi {
					t.Fatalf("retry %d: delay %s outside [%s, %s]", i, got, lo, hi)
				}
				if got > MaxRetryInterval {
					t.Fatalf("retry %d: delay %s above the cap %s", i, got, MaxRetryInterval)
				}
				nominal = min(nominal*2, MaxRetryInterval)
			}
			if got := b.next(); got < MaxRetryInterval/2 {
				t.Fatalf("after 12 failures the delay is %s; want the capped %s (±jitter)", got, MaxRetryInterval)
			}
			b.reset()
			if got := b.next(); got > MinRetryInterval {
				t.Fatalf("after reset the delay is %s; want at most %s", got, MinRetryInterval)
			}
		})
	}
}

func TestBackoffJitterSpreadsNodes(t *testing.T) {
	// Two nodes drawing different jitter retry at different times.
	a := newBackoff(time.Second, MaxRetryInterval, func() float64 { return 0.1 })
	b := newBackoff(time.Second, MaxRetryInterval, func() float64 { return 0.9 })
	for i := 0; i < 5; i++ {
		if da, db := a.next(), b.next(); da == db {
			t.Fatalf("retry %d: both nodes wait %s", i, da)
		}
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time { return c.t }

func TestOutageLogIsShortDuringALongOutage(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	waiting := 3
	o := newOutageLog(log, clock.Now, SummaryInterval, func() []any { return []any{"results_waiting", waiting} })
	start := clock.t
	if !o.lastContact().Equal(start) {
		t.Fatalf("last contact %v, want the start %v", o.lastContact(), start)
	}
	// 45 minutes of one failure a second, as the agent did.
	for i := 0; i < 45*60; i++ {
		o.failed("sync", errors.New("connection refused"))
		clock.t = clock.t.Add(time.Second)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// One line at the start, then one per SummaryInterval.
	if want := 1 + int(45*time.Minute/SummaryInterval); len(lines) > want || len(lines) < want-1 {
		t.Fatalf("%d log lines for a 45-minute outage, want about %d:\n%s", len(lines), want, buf.String())
	}
	if !strings.Contains(lines[0], "server unreachable") || !strings.Contains(lines[0], "connection refused") {
		t.Fatalf("first line does not say what failed: %s", lines[0])
	}
	last := lines[len(lines)-1]
	for _, want := range []string{"server still unreachable", "for=40m0s", "results_waiting=3", "failed_calls="} {
		if !strings.Contains(last, want) {
			t.Fatalf("summary %q lacks %q", last, want)
		}
	}
	if !o.lastContact().Equal(start) {
		t.Fatalf("failures moved the last contact to %v", o.lastContact())
	}
	buf.Reset()
	o.succeeded()
	if got := buf.String(); !strings.Contains(got, "server reachable again") || !strings.Contains(got, "after=45m0s") {
		t.Fatalf("recovery line: %q", got)
	}
	if !o.lastContact().Equal(clock.t) {
		t.Fatalf("last contact %v, want %v", o.lastContact(), clock.t)
	}
	// A new outage starts with a first line again.
	buf.Reset()
	o.failed("sync", errors.New("connection reset"))
	o.failed("sync", errors.New("connection reset"))
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("new outage logged %d lines for 2 failures, want 1:\n%s", n, buf.String())
	}
	// Successes with no outage log nothing.
	o.succeeded()
	buf.Reset()
	o.succeeded()
	if buf.Len() != 0 {
		t.Fatalf("a success with no outage logged %q", buf.String())
	}
}

// A node's sync retries wait at most half its lease, so a server that
// comes back (and gives every node one fresh lease and its grace) hears
// from each in time; on main a node whose retries had grown past the
// lease was declared lost for the server's own absence
// (e2e TestJobsServerKill9).
func TestSyncRetriesStayWithinHalfALease(t *testing.T) {
	for _, tc := range []struct{ lease, want time.Duration }{
		{time.Second, 500 * time.Millisecond},
		{10 * time.Second, 5 * time.Second},
		{2 * time.Hour, MaxRetryInterval},
		{100 * time.Millisecond, MinRetryInterval},
		{0, MaxRetryInterval},
	} {
		if got := syncRetryCap(tc.lease); got != tc.want {
			t.Errorf("syncRetryCap(%s) = %s, want %s", tc.lease, got, tc.want)
		}
		b := newBackoff(MinRetryInterval, syncRetryCap(tc.lease), func() float64 { return 0.999999 })
		for i := 0; i < 20; i++ {
			if d := b.next(); d > tc.want {
				t.Fatalf("lease %s: retry %d waits %s, past %s", tc.lease, i, d, tc.want)
			}
		}
	}
}
