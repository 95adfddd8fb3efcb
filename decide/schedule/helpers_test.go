package schedule_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
)

// utc is a fixed instant; the tests never read the clock.
func utc(y int, m time.Month, d, h, mi int) time.Time {
	return time.Date(y, m, d, h, mi, 0, 0, time.UTC)
}

func cronSpec(action, expr, tz string) *compute.ComputeStartStopSchedule {
	return &compute.ComputeStartStopSchedule{Action: action, Trigger: &compute.ScheduleTrigger{Type: "Cron", Expression: expr, TimeZone: tz}}
}

func recSpec(action, freq string, interval int, tz string, p *compute.RecurrencePattern) *compute.ComputeStartStopSchedule {
	return &compute.ComputeStartStopSchedule{Action: action, Trigger: &compute.ScheduleTrigger{Type: "Recurrence", Frequency: freq, Interval: interval, TimeZone: tz, Schedule: p}}
}

func mustCompile(t testing.TB, sc *compute.ComputeStartStopSchedule) *schedule.Schedule {
	t.Helper()
	s, err := schedule.Compile(sc)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

// firings lists the first n firings after t.
func firings(s *schedule.Schedule, t time.Time, n int) []time.Time {
	var out []time.Time
	for range n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

func checkFirings(t *testing.T, got []time.Time, want ...time.Time) {
	t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			t.Fatalf("%d firings, want %d: the first missing is %s", len(got), len(want), want[i].UTC().Format(time.RFC3339))
		case i >= len(want):
			t.Fatalf("%d firings, want %d: the first extra is %s", len(got), len(want), got[i].UTC().Format(time.RFC3339))
		case !got[i].Equal(want[i]):
			t.Errorf("firing %d: got %s (%s), want %s", i, got[i].UTC().Format(time.RFC3339), got[i].Format("2006-01-02 15:04 MST"), want[i].UTC().Format(time.RFC3339))
		}
	}
}
