package schedule_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
)

// In 2026 Los Angeles springs forward on March 8 (02:00 PST → 03:00 PDT,
// 10:00 UTC) and falls back on November 1 (02:00 PDT → 01:00 PST, 09:00
// UTC).

func TestDSTEveningAcrossSpringForward(t *testing.T) {
	s := mustCompile(t, cronSpec("stop", "0 18 * * *", "Pacific Standard Time"))
	got := firings(s, utc(2026, 3, 7, 12, 0), 2)
	checkFirings(t, got,
		utc(2026, 3, 8, 2, 0), // March 7, 18:00 PST
		utc(2026, 3, 9, 1, 0), // March 8, 18:00 PDT
	)
	for _, f := range got {
		if f.Hour() != 18 {
			t.Errorf("%s is not 18:00 on Los Angeles clocks", f.Format(time.RFC3339))
		}
	}
}

// A wall time skipped by spring-forward fires once, at the end of the gap.
func TestDSTSkippedTimeFiresAfterGap(t *testing.T) {
	s := mustCompile(t, cronSpec("stop", "30 2 * * *", "Pacific Standard Time"))
	checkFirings(t, firings(s, utc(2026, 3, 7, 11, 0), 3),
		utc(2026, 3, 8, 10, 0),  // 03:00 PDT: 02:30 did not exist
		utc(2026, 3, 9, 9, 30),  // 02:30 PDT
		utc(2026, 3, 10, 9, 30), // 02:30 PDT
	)
	if at, ok := s.Due(utc(2026, 3, 8, 9, 59), utc(2026, 3, 8, 10, 0)); !ok || !at.Equal(utc(2026, 3, 8, 10, 0)) {
		t.Errorf("Due at the end of the gap: %s %v", at, ok)
	}
	if p := s.Prev(utc(2026, 3, 8, 10, 30)); !p.Equal(utc(2026, 3, 8, 10, 0)) {
		t.Errorf("Prev = %s", p)
	}

	// Several times in the gap, and the time right after it, fire once.
	s = mustCompile(t, cronSpec("stop", "0,30 2,3 * * *", "Pacific Standard Time"))
	checkFirings(t, firings(s, utc(2026, 3, 8, 9, 0), 3),
		utc(2026, 3, 8, 10, 0),  // 02:00, 02:30 and 03:00 PDT
		utc(2026, 3, 8, 10, 30), // 03:30 PDT
		utc(2026, 3, 9, 9, 0),   // 02:00 PDT the next day
	)
}

// A wall time repeated by fall-back fires once, at its first occurrence.
func TestDSTRepeatedTimeFiresOnce(t *testing.T) {
	s := mustCompile(t, cronSpec("start", "30 1 * * *", "Pacific Standard Time"))
	checkFirings(t, firings(s, utc(2026, 10, 31, 12, 0), 2),
		utc(2026, 11, 1, 8, 30), // 01:30 PDT
		utc(2026, 11, 2, 9, 30), // 01:30 PST the next day; not 01:30 PST on Nov 1
	)
	if at, ok := s.Due(utc(2026, 11, 1, 8, 31), utc(2026, 11, 1, 9, 45)); ok {
		t.Errorf("the repeated 01:30 PST fired again: %s", at)
	}
	if at, ok := s.Due(utc(2026, 11, 1, 8, 0), utc(2026, 11, 1, 9, 45)); !ok || !at.Equal(utc(2026, 11, 1, 8, 30)) {
		t.Errorf("Due over the repeated hour: %s %v", at, ok)
	}

	// The same for every time in the repeated hour.
	s = mustCompile(t, cronSpec("start", "*/30 1 * * *", "Pacific Standard Time"))
	checkFirings(t, firings(s, utc(2026, 11, 1, 7, 0), 3), utc(2026, 11, 1, 8, 0), utc(2026, 11, 1, 8, 30), utc(2026, 11, 2, 9, 0))
}

// A recurrence at a skipped or repeated time follows the same rule.
func TestDSTRecurrence(t *testing.T) {
	s := mustCompile(t, recSpec("stop", "day", 1, "Pacific Standard Time", &compute.RecurrencePattern{Hours: compute.IntList{2}, Minutes: compute.IntList{30}}))
	checkFirings(t, firings(s, utc(2026, 3, 7, 11, 0), 2), utc(2026, 3, 8, 10, 0), utc(2026, 3, 9, 9, 30))
	s = mustCompile(t, recSpec("stop", "day", 1, "Pacific Standard Time", &compute.RecurrencePattern{Hours: compute.IntList{1}, Minutes: compute.IntList{30}}))
	checkFirings(t, firings(s, utc(2026, 10, 31, 12, 0), 2), utc(2026, 11, 1, 8, 30), utc(2026, 11, 2, 9, 30))
}

// A start_time inside the gap is the end of the gap.
func TestDSTStartTimeInGap(t *testing.T) {
	sc := cronSpec("stop", "* * * * *", "Pacific Standard Time")
	sc.Trigger.StartTime = "2026-03-08T02:30:00"
	if n := mustCompile(t, sc).Next(time.Time{}); !n.Equal(utc(2026, 3, 8, 10, 0)) {
		t.Errorf("first firing %s, want 03:00 PDT", n)
	}
}

// TestDSTBruteForce checks Next and Prev against a minute-by-minute walk
// of the zone's clocks around each 2026 transition of zones that jump an
// hour at 02:00 (Los Angeles, London), forward in October (Sydney), by
// half an hour (Lord Howe) and at midnight (Santiago). The walk's rule:
// a wall time W fires at the first instant whose clock shows W or later,
// which is W's first occurrence, or the end of the gap W fell in.
func TestDSTBruteForce(t *testing.T) {
	patterns := []struct {
		expr  string
		match func(h, m int) bool
	}{
		{"*/15 * * * *", func(h, m int) bool { return m%15 == 0 }},
		{"30 2 * * *", func(h, m int) bool { return h == 2 && m == 30 }},
		{"0,30 0-3 * * *", func(h, m int) bool { return h <= 3 && m%30 == 0 }},
		{"45 23 * * *", func(h, m int) bool { return h == 23 && m == 45 }},
		{"0 0 * * *", func(h, m int) bool { return h == 0 && m == 0 }},
		{"10 1 * * *", func(h, m int) bool { return h == 1 && m == 10 }},
	}
	for _, zone := range []string{"America/Los_Angeles", "GMT Standard Time", "AUS Eastern Standard Time", "Australia/Lord_Howe", "Pacific SA Standard Time"} {
		loc, err := schedule.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		transitions := transitionsIn(loc, 2026)
		if len(transitions) != 2 {
			t.Fatalf("%s: %d transitions in 2026", zone, len(transitions))
		}
		for _, tr := range transitions {
			from, to := tr.Add(-36*time.Hour).Truncate(time.Minute), tr.Add(36*time.Hour)
			for _, p := range patterns {
				t.Run(fmt.Sprintf("%s/%s/%s", zone, tr.Format("Jan02"), p.expr), func(t *testing.T) {
					s := mustCompile(t, cronSpec("stop", p.expr, zone))
					want := walkClocks(loc, from, to, p.match)
					var got []time.Time
					for f := s.Next(from.Add(-time.Nanosecond)); !f.IsZero() && f.Before(to); f = s.Next(f) {
						got = append(got, f)
					}
					checkFirings(t, got, want...)
					for i, f := range want {
						if p := s.Prev(f); !p.Equal(f) {
							t.Errorf("Prev(firing %s) = %s", f, p)
						}
						if i > 0 {
							if p := s.Prev(f.Add(-time.Second)); !p.Equal(want[i-1]) {
								t.Errorf("Prev(just before %s) = %s, want %s", f, p, want[i-1])
							}
						}
					}
				})
			}
		}
	}
}

// transitionsIn lists the instants in year y at which loc's offset changes.
func transitionsIn(loc *time.Location, y int) []time.Time {
	var out []time.Time
	t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	for t.Year() == y {
		_, end := t.In(loc).ZoneBounds()
		if end.IsZero() || end.Year() != y {
			break
		}
		out = append(out, end)
		t = end
	}
	return out
}

// walkClocks steps minute by minute through [from, to) and returns the
// instants at which a matching wall time is first reached.
func walkClocks(loc *time.Location, from, to time.Time, match func(h, m int) bool) []time.Time {
	type wall struct{ day, min int64 } // day number, minute of day
	key := func(t time.Time) int64 {
		l := t.In(loc)
		y, m, d := l.Date()
		day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
		return day*1440 + int64(l.Hour()*60+l.Minute())
	}
	var out []time.Time
	seen := key(from.Add(-time.Minute))
	for u := from; u.Before(to); u = u.Add(time.Minute) {
		k := key(u)
		fired := false
		// Wall times not reached before u and reached at u: one minute,
		// or a whole gap.
		for w := seen + 1; w <= k; w++ {
			mod := w % 1440
			if match(int(mod/60), int(mod%60)) {
				fired = true
			}
		}
		if k > seen {
			seen = k
		}
		if fired {
			out = append(out, u)
		}
	}
	return out
}
