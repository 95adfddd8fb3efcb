package schedule_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
)

// The seed example: Azure's cron schedule, 18:00 on Los Angeles clocks,
// from 2021-03-10T21:21:07; DST began there on 2021-03-14.
func TestCronSeedPacific(t *testing.T) {
	sc := cronSpec("Stop", "0 18 * * *", "Pacific Standard Time")
	sc.Trigger.StartTime = "2021-03-10T21:21:07"
	s := mustCompile(t, sc)
	checkFirings(t, firings(s, time.Time{}, 4),
		utc(2021, time.March, 12, 2, 0), // 11th 18:00 PST; the 10th is before start_time
		utc(2021, time.March, 13, 2, 0),
		utc(2021, time.March, 14, 2, 0),
		utc(2021, time.March, 15, 1, 0), // 14th 18:00 PDT
	)
	if got := s.Next(time.Time{}).Format("2006-01-02 15:04 MST"); got != "2021-03-11 18:00 PST" {
		t.Errorf("first firing on the zone's clock: %s", got)
	}
	if p := s.Prev(utc(2021, time.March, 12, 1, 0)); !p.IsZero() {
		t.Errorf("Prev before the first firing: %s", p)
	}
}

func TestCronFields(t *testing.T) {
	from := utc(2026, time.March, 1, 0, 0) // a Sunday
	for _, c := range []struct {
		expr string
		want []time.Time
	}{
		{"0 18 * * *", []time.Time{utc(2026, 3, 1, 18, 0), utc(2026, 3, 2, 18, 0)}},
		{"*/20 9 * * *", []time.Time{utc(2026, 3, 1, 9, 0), utc(2026, 3, 1, 9, 20), utc(2026, 3, 1, 9, 40), utc(2026, 3, 2, 9, 0)}},
		{"0 8 * * 1-5", []time.Time{utc(2026, 3, 2, 8, 0), utc(2026, 3, 3, 8, 0)}},
		{"0 8 * * MON,fri", []time.Time{utc(2026, 3, 2, 8, 0), utc(2026, 3, 6, 8, 0), utc(2026, 3, 9, 8, 0)}},
		// Sunday is 0 or 7.
		{"0 8 * * 7", []time.Time{utc(2026, 3, 1, 8, 0), utc(2026, 3, 8, 8, 0)}},
		{"0 8 * * 0", []time.Time{utc(2026, 3, 1, 8, 0), utc(2026, 3, 8, 8, 0)}},
		{"0 8 * * 6-7", []time.Time{utc(2026, 3, 1, 8, 0), utc(2026, 3, 7, 8, 0), utc(2026, 3, 8, 8, 0)}},
		// Both day fields restricted: either matches (cron's rule).
		{"0 0 15 * 3", []time.Time{utc(2026, 3, 4, 0, 0), utc(2026, 3, 11, 0, 0), utc(2026, 3, 15, 0, 0), utc(2026, 3, 18, 0, 0)}},
		{"30 6 1 JAN,jul *", []time.Time{utc(2026, 7, 1, 6, 30), utc(2027, 1, 1, 6, 30)}},
		{"0 0 29 2 *", []time.Time{utc(2028, 2, 29, 0, 0), utc(2032, 2, 29, 0, 0)}},
	} {
		s := mustCompile(t, cronSpec("stop", c.expr, ""))
		t.Run(c.expr, func(t *testing.T) {
			checkFirings(t, firings(s, from, len(c.want)), c.want...)
		})
	}
}

// Next is strictly after; Prev is at or before.
func TestCronNextPrevBoundaries(t *testing.T) {
	s := mustCompile(t, cronSpec("stop", "0 18 * * *", ""))
	at := utc(2026, time.March, 2, 18, 0)
	if n := s.Next(at); !n.Equal(utc(2026, 3, 3, 18, 0)) {
		t.Errorf("Next(firing) = %s", n)
	}
	if n := s.Next(at.Add(-time.Nanosecond)); !n.Equal(at) {
		t.Errorf("Next(just before) = %s", n)
	}
	if p := s.Prev(at); !p.Equal(at) {
		t.Errorf("Prev(firing) = %s", p)
	}
	if p := s.Prev(at.Add(-time.Nanosecond)); !p.Equal(utc(2026, 3, 1, 18, 0)) {
		t.Errorf("Prev(just before) = %s", p)
	}
}

func TestStartAndEndTime(t *testing.T) {
	sc := cronSpec("stop", "0 18 * * *", "UTC")
	sc.Trigger.StartTime = "2026-03-05T18:00:00"
	sc.Trigger.EndTime = "2026-03-07T18:00:00" // inclusive
	s := mustCompile(t, sc)
	checkFirings(t, firings(s, utc(2026, 3, 1, 0, 0), 10),
		utc(2026, 3, 5, 18, 0), utc(2026, 3, 6, 18, 0), utc(2026, 3, 7, 18, 0))
	if n := s.Next(utc(2026, 3, 7, 18, 0)); !n.IsZero() {
		t.Errorf("Next past end_time = %s", n)
	}
	if p := s.Prev(utc(2027, 1, 1, 0, 0)); !p.Equal(utc(2026, 3, 7, 18, 0)) {
		t.Errorf("Prev long after end_time = %s", p)
	}
	if at, ok := s.Due(utc(2026, 3, 7, 19, 0), utc(2026, 4, 1, 0, 0)); ok {
		t.Errorf("Due after end_time: %s", at)
	}
	if at, ok := s.Due(utc(2026, 3, 7, 17, 0), utc(2026, 4, 1, 0, 0)); !ok || !at.Equal(utc(2026, 3, 7, 18, 0)) {
		t.Errorf("Due across end_time: %s %v", at, ok)
	}

	// start_time's seconds do not push its minute's firing away.
	sc = cronSpec("stop", "21 21 * * *", "UTC")
	sc.Trigger.StartTime = "2021-03-10T21:21:07"
	if n := mustCompile(t, sc).Next(time.Time{}); !n.Equal(utc(2021, 3, 10, 21, 21)) {
		t.Errorf("first firing %s, want start_time's minute", n)
	}

	// start_time with an offset is that instant, whatever the zone.
	sc = cronSpec("stop", "0 * * * *", "Tokyo Standard Time")
	sc.Trigger.StartTime = "2026-03-01T10:30:00Z"
	if n := mustCompile(t, sc).Next(time.Time{}); !n.Equal(utc(2026, 3, 1, 11, 0)) {
		t.Errorf("first firing %s", n)
	}

	// A date alone is midnight on the zone's clock.
	sc = cronSpec("stop", "0 * * * *", "India Standard Time")
	sc.Trigger.StartTime = "2026-03-01"
	if n := mustCompile(t, sc).Next(time.Time{}); !n.Equal(time.Date(2026, 2, 28, 18, 30, 0, 0, time.UTC)) {
		t.Errorf("first firing %s, want 2026-03-01 00:00 IST", n)
	}
}

func TestDisabledNeverFires(t *testing.T) {
	sc := cronSpec("stop", "* * * * *", "")
	sc.State = compute.ScheduleDisabled
	s := mustCompile(t, sc)
	if s.Enabled() {
		t.Error("enabled")
	}
	if n := s.Next(utc(2026, 3, 1, 0, 0)); !n.IsZero() {
		t.Errorf("Next = %s", n)
	}
	if p := s.Prev(utc(2026, 3, 1, 0, 0)); !p.IsZero() {
		t.Errorf("Prev = %s", p)
	}
	if at, ok := s.Due(utc(2026, 3, 1, 0, 0), utc(2026, 3, 2, 0, 0)); ok {
		t.Errorf("Due = %s", at)
	}
}
