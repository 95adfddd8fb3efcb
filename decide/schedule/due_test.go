package schedule_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
)

func TestDue(t *testing.T) {
	s := mustCompile(t, cronSpec("stop", "0 18 * * *", "UTC"))
	for _, c := range []struct {
		name      string
		last, now time.Time
		want      time.Time // zero: none
	}{
		{"in the window", utc(2026, 3, 2, 17, 59), utc(2026, 3, 2, 18, 0), utc(2026, 3, 2, 18, 0)},
		{"window excludes last", utc(2026, 3, 2, 18, 0), utc(2026, 3, 2, 18, 5), time.Time{}},
		{"before the firing", utc(2026, 3, 2, 17, 0), utc(2026, 3, 2, 17, 59), time.Time{}},
		{"empty window", utc(2026, 3, 2, 18, 0), utc(2026, 3, 2, 18, 0), time.Time{}},
		{"clock went back", utc(2026, 3, 2, 19, 0), utc(2026, 3, 2, 17, 0), time.Time{}},
		{"days of downtime: only the latest", utc(2026, 2, 20, 0, 0), utc(2026, 3, 2, 20, 0), utc(2026, 3, 2, 18, 0)},
		{"never evaluated", time.Time{}, utc(2026, 3, 2, 17, 0), utc(2026, 3, 1, 18, 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			at, ok := s.Due(c.last, c.now)
			if ok != !c.want.IsZero() || !at.Equal(c.want) {
				t.Errorf("Due = %s, %v; want %s", at, ok, c.want)
			}
		})
	}
}

// Due returns one firing per call however many fell in the window, and a
// controller that evaluates every few seconds sees each firing once.
func TestDueOncePerFiring(t *testing.T) {
	s := mustCompile(t, cronSpec("stop", "*/10 * * * *", "Pacific Standard Time"))
	if at, ok := s.Due(utc(2026, 3, 1, 0, 0), utc(2026, 3, 9, 0, 5)); !ok || !at.Equal(utc(2026, 3, 9, 0, 0)) {
		t.Errorf("a week of firings: %s %v", at, ok)
	}
	var fired []time.Time
	last := utc(2026, 3, 8, 9, 0)
	for now := last; now.Before(utc(2026, 3, 8, 11, 0)); {
		now = now.Add(7 * time.Second)
		if at, ok := s.Due(last, now); ok {
			fired = append(fired, at)
		}
		last = now
	}
	// Across the spring-forward gap (10:00 UTC): 01:10–01:50 PST, then
	// 03:00–04:00 PDT.
	want := firings(s, utc(2026, 3, 8, 9, 0), 12)
	checkFirings(t, fired, want...)
}

// The missed-firing rule: the server was down from 17:00 yesterday to
// 09:00 today, across a stop at 18:00 and a start at 08:00: one action,
// the start.
func TestDecideMissedFiringsDuringDowntime(t *testing.T) {
	list := compileAll(t, cronSpec("stop", "0 18 * * *", "UTC"), cronSpec("start", "0 8 * * *", "UTC"))
	f, ok := schedule.Decide(list, utc(2026, 3, 9, 17, 0), utc(2026, 3, 10, 9, 0), schedule.MissedFiringMaxAge)
	if !ok || f.Index != 1 || f.Action != compute.ScheduleActionStart || !f.At.Equal(utc(2026, 3, 10, 8, 0)) || f.Stale {
		t.Fatalf("Decide = %+v, %v", f, ok)
	}
	if want := `schedule 2 (cron "0 8 * * *" UTC) fired at 2026-03-10 08:00 UTC`; f.Reason != want {
		t.Errorf("Reason = %q, want %q", f.Reason, want)
	}

	// Down only until 05:00: the stop is the latest, 11 hours late.
	f, ok = schedule.Decide(list, utc(2026, 3, 9, 17, 0), utc(2026, 3, 10, 5, 0), schedule.MissedFiringMaxAge)
	if !ok || f.Index != 0 || f.Action != compute.ScheduleActionStop || f.Stale {
		t.Errorf("Decide = %+v, %v", f, ok)
	}
}

func TestDecideStale(t *testing.T) {
	list := compileAll(t, cronSpec("stop", "0 18 * * *", "UTC"))
	// The 18:00 stop, 13 hours late: reported, stale.
	f, ok := schedule.Decide(list, utc(2026, 3, 10, 17, 0), utc(2026, 3, 11, 7, 0), 12*time.Hour)
	if !ok || !f.Stale || !f.At.Equal(utc(2026, 3, 10, 18, 0)) {
		t.Errorf("Decide = %+v, %v", f, ok)
	}
	// 12 hours late is still meaningful; no bound never is stale.
	if f, _ := schedule.Decide(list, utc(2026, 3, 10, 17, 0), utc(2026, 3, 11, 6, 0), 12*time.Hour); f.Stale {
		t.Errorf("12h late: stale")
	}
	if f, _ := schedule.Decide(list, utc(2026, 3, 10, 17, 0), utc(2026, 3, 20, 0, 0), 0); f.Stale {
		t.Errorf("no bound: stale")
	}
	if !schedule.Meaningful(utc(2026, 3, 10, 18, 0), utc(2026, 3, 11, 6, 0), 12*time.Hour) ||
		schedule.Meaningful(utc(2026, 3, 10, 18, 0), utc(2026, 3, 11, 6, 1), 12*time.Hour) {
		t.Error("Meaningful's bound")
	}
}

func TestDecideReasonInZone(t *testing.T) {
	list := compileAll(t, cronSpec("stop", "0 18 * * *", "Pacific Standard Time"))
	f, ok := schedule.Decide(list, utc(2026, 3, 9, 0, 0), utc(2026, 3, 9, 1, 30), schedule.MissedFiringMaxAge)
	if want := `schedule 1 (cron "0 18 * * *" Pacific Standard Time) fired at 2026-03-08 18:00 PDT`; !ok || f.Reason != want {
		t.Errorf("Reason = %q, %v; want %q", f.Reason, ok, want)
	}
}

func TestDecideNothingDueDisabledAndTies(t *testing.T) {
	off := cronSpec("start", "0 12 * * *", "UTC")
	off.State = "Disabled"
	list := compileAll(t, cronSpec("stop", "0 18 * * *", "UTC"), off)
	if f, ok := schedule.Decide(list, utc(2026, 3, 10, 11, 0), utc(2026, 3, 10, 13, 0), 0); ok {
		t.Errorf("a disabled schedule fired: %+v", f)
	}
	if f, ok := schedule.Decide(nil, utc(2026, 3, 10, 11, 0), utc(2026, 3, 10, 13, 0), 0); ok {
		t.Errorf("no schedules: %+v", f)
	}
	if f, ok := schedule.Decide([]*schedule.Schedule{nil}, utc(2026, 3, 10, 11, 0), utc(2026, 3, 10, 13, 0), 0); ok {
		t.Errorf("nil schedule: %+v", f)
	}
	// Two schedules at the same instant: the later in the list wins.
	list = compileAll(t, cronSpec("stop", "0 18 * * *", "UTC"), cronSpec("start", "0 18 * * *", "UTC"), cronSpec("stop", "0 9 * * *", "UTC"))
	if f, ok := schedule.Decide(list, utc(2026, 3, 10, 17, 0), utc(2026, 3, 10, 19, 0), 0); !ok || f.Index != 1 {
		t.Errorf("tie: %+v", f)
	}
}

func compileAll(t *testing.T, list ...*compute.ComputeStartStopSchedule) []*schedule.Schedule {
	t.Helper()
	out, err := schedule.CompileAll(&compute.ComputeSchedules{ComputeStartStop: list})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
