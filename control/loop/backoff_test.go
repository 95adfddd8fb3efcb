package loop

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// One item that fails does not stop the others of the pass; it is not
// tried again (nor logged) before its wait is over, its waits double up
// to the cap, it is handed to failed exhausted at GiveUp, and it loses
// its failures once it steps again.
func TestEachIsolatesAndBacksOff(t *testing.T) {
	b := &Backoff{First: time.Second, Max: 4 * time.Second, GiveUp: 5}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	broken := true
	var stepped []string
	var failures []Failure
	items := []Item[string]{{Key: "a", Value: "a"}, {Key: "bad", Value: "bad"}, {Key: "c", Value: "c"}}
	pass := func() int {
		stepped = stepped[:0]
		return Each(b, now, log, "advancing", items, func(v string) error {
			stepped = append(stepped, v)
			if v == "bad" && broken {
				return core.Errorf(core.ENOTFOUND, "job x left no outputs")
			}
			return nil
		}, func(v string, f Failure) { failures = append(failures, f) })
	}
	if n := pass(); n != 1 || strings.Join(stepped, ",") != "a,bad,c" {
		t.Fatalf("first pass: %d failed, stepped %v; want bad alone failed and every item stepped", n, stepped)
	}
	if f := failures[0]; f.Count != 1 || f.Next != now.Add(time.Second) || f.Code != core.ENOTFOUND || f.Exhausted {
		t.Fatalf("first failure %+v", f)
	}
	// Within its wait: not tried, not logged again.
	lines := strings.Count(logs.String(), "\n")
	now = now.Add(500 * time.Millisecond)
	if pass(); strings.Join(stepped, ",") != "a,c" || strings.Count(logs.String(), "\n") != lines {
		t.Fatalf("within the wait: stepped %v, log %q", stepped, logs.String())
	}
	waits := []time.Duration{time.Second}
	for len(failures) < 5 {
		f := failures[len(failures)-1]
		now = f.Next
		pass()
		waits = append(waits, failures[len(failures)-1].Next.Sub(now))
	}
	if got := waits; got[1] != 2*time.Second || got[2] != 4*time.Second || got[3] != 4*time.Second {
		t.Fatalf("waits %v, want doubling to the 4s cap", got)
	}
	if f := failures[4]; !f.Exhausted || f.Count != 5 || !strings.Contains(f.Reason("advancing"), "5 times in a row") {
		t.Fatalf("fifth failure %+v (%s), want exhausted", f, f.Reason("advancing"))
	}
	if got := strings.Count(logs.String(), "advancing failed"); got != 5 {
		t.Fatalf("%d log lines for 5 failures", got)
	}
	broken = false
	now = failures[4].Next
	pass()
	if _, failing := b.Failing("bad"); failing {
		t.Fatal("an item that stepped again still counts its failures")
	}
	// An item that leaves the pass is forgotten.
	broken = true
	pass()
	items = items[:1]
	pass()
	if _, failing := b.Failing("bad"); failing {
		t.Fatal("an item no longer in the pass is remembered")
	}
}

// An error that is not Shoal's shows as an internal error: its detail is
// logged, never shown on the item.
func TestFailureHidesInternalDetail(t *testing.T) {
	b := NewBackoff(0)
	f := b.Failed("x", time.Unix(0, 0), errors.New("open /var/lib/shoal/secret: permission denied"))
	if f.Code != core.EINTERNAL || strings.Contains(f.Reason("advancing"), "secret") || f.Exhausted {
		t.Fatalf("%+v: %s", f, f.Reason("advancing"))
	}
}
