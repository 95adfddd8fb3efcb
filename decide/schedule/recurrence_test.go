package schedule_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
)

// The seed example: every Friday at 15:30 in India (+05:30, no DST).
func TestRecurrenceSeedIndia(t *testing.T) {
	s := mustCompile(t, recSpec("start", "week", 1, "India Standard Time",
		&compute.RecurrencePattern{Hours: compute.IntList{15}, Minutes: compute.IntList{30}, WeekDays: compute.StringList{"Friday"}}))
	checkFirings(t, firings(s, utc(2026, time.March, 1, 0, 0), 3),
		utc(2026, 3, 6, 10, 0), utc(2026, 3, 13, 10, 0), utc(2026, 3, 20, 10, 0))
}

// The ARM example: frequency Day, interval 1, hours [17], minutes [0], UTC.
func TestRecurrenceSeedARM(t *testing.T) {
	s := mustCompile(t, recSpec("stop", "Day", 1, "UTC", &compute.RecurrencePattern{Hours: compute.IntList{17}, Minutes: compute.IntList{0}}))
	checkFirings(t, firings(s, utc(2026, 3, 1, 16, 59), 3), utc(2026, 3, 1, 17, 0), utc(2026, 3, 2, 17, 0), utc(2026, 3, 3, 17, 0))
	checkFirings(t, firings(s, utc(2026, 3, 1, 17, 0), 1), utc(2026, 3, 2, 17, 0))
}

func TestRecurrenceEveryTwoWeeks(t *testing.T) {
	p := &compute.RecurrencePattern{Hours: compute.IntList{9}, WeekDays: compute.StringList{"Monday", "Wednesday"}}
	sc := recSpec("start", "week", 2, "", p)
	sc.Trigger.StartTime = "2026-03-02T00:00:00" // a Monday: its week is the first
	checkFirings(t, firings(mustCompile(t, sc), utc(2026, 1, 1, 0, 0), 6),
		utc(2026, 3, 2, 9, 0), utc(2026, 3, 4, 9, 0),
		utc(2026, 3, 16, 9, 0), utc(2026, 3, 18, 9, 0),
		utc(2026, 3, 30, 9, 0), utc(2026, 4, 1, 9, 0))

	// A start in the middle of the week counts that week (Monday to
	// Sunday) as the first: its Wednesday fires, not its Monday.
	sc.Trigger.StartTime = "2026-03-03T12:00:00"
	checkFirings(t, firings(mustCompile(t, sc), utc(2026, 1, 1, 0, 0), 3),
		utc(2026, 3, 4, 9, 0), utc(2026, 3, 16, 9, 0), utc(2026, 3, 18, 9, 0))

	// Without start_time weeks count from the epoch's week (Monday
	// 1969-12-29): the week of 2026-03-09 is an even one.
	sc.Trigger.StartTime = ""
	checkFirings(t, firings(mustCompile(t, sc), utc(2026, 3, 1, 0, 0), 3),
		utc(2026, 3, 9, 9, 0), utc(2026, 3, 11, 9, 0), utc(2026, 3, 23, 9, 0))
}

func TestRecurrenceDays(t *testing.T) {
	// Every 3 days from start_time, at its time of day.
	sc := recSpec("stop", "day", 3, "UTC", nil)
	sc.Trigger.StartTime = "2026-03-01T07:45:00"
	checkFirings(t, firings(mustCompile(t, sc), time.Time{}, 3), utc(2026, 3, 1, 7, 45), utc(2026, 3, 4, 7, 45), utc(2026, 3, 7, 7, 45))

	// Hours given, minutes taken from start_time.
	sc = recSpec("stop", "day", 1, "UTC", &compute.RecurrencePattern{Hours: compute.IntList{18, 8}})
	sc.Trigger.StartTime = "2026-03-01T07:45:00"
	checkFirings(t, firings(mustCompile(t, sc), time.Time{}, 3), utc(2026, 3, 1, 8, 45), utc(2026, 3, 1, 18, 45), utc(2026, 3, 2, 8, 45))

	// Without start_time: 00:00, every day.
	sc = recSpec("stop", "day", 1, "UTC", nil)
	checkFirings(t, firings(mustCompile(t, sc), utc(2026, 3, 1, 0, 0), 2), utc(2026, 3, 2, 0, 0), utc(2026, 3, 3, 0, 0))
}

func TestRecurrenceWeekDefaultsToStartDay(t *testing.T) {
	sc := recSpec("stop", "week", 1, "UTC", nil)
	sc.Trigger.StartTime = "2026-03-06T19:00:00" // a Friday
	checkFirings(t, firings(mustCompile(t, sc), time.Time{}, 2), utc(2026, 3, 6, 19, 0), utc(2026, 3, 13, 19, 0))
}

func TestRecurrenceMonths(t *testing.T) {
	// The 31st at 08:00: months without one are skipped.
	s := mustCompile(t, recSpec("stop", "month", 1, "UTC", &compute.RecurrencePattern{MonthDays: compute.IntList{31}, Hours: compute.IntList{8}}))
	checkFirings(t, firings(s, utc(2026, 3, 31, 9, 0), 2), utc(2026, 5, 31, 8, 0), utc(2026, 7, 31, 8, 0))

	// Every 2 months from start_time, on its day and time.
	sc := recSpec("stop", "month", 2, "UTC", nil)
	sc.Trigger.StartTime = "2026-01-15T10:00:00"
	checkFirings(t, firings(mustCompile(t, sc), time.Time{}, 3), utc(2026, 1, 15, 10, 0), utc(2026, 3, 15, 10, 0), utc(2026, 5, 15, 10, 0))
}

func TestRecurrenceMinutesAndHours(t *testing.T) {
	sc := recSpec("stop", "minute", 15, "UTC", nil)
	sc.Trigger.StartTime = "2026-03-01T08:05:00"
	s := mustCompile(t, sc)
	checkFirings(t, firings(s, utc(2026, 3, 1, 9, 0), 2), utc(2026, 3, 1, 9, 5), utc(2026, 3, 1, 9, 20))
	if p := s.Prev(utc(2026, 3, 1, 8, 4)); !p.IsZero() {
		t.Errorf("Prev before start_time = %s", p)
	}
	if p := s.Prev(utc(2026, 3, 1, 8, 34)); !p.Equal(utc(2026, 3, 1, 8, 20)) {
		t.Errorf("Prev = %s", p)
	}

	// Without start_time, minutes count from midnight 1970-01-01 on the
	// zone's clock: every 60 minutes is on India's hour, half past in UTC.
	s = mustCompile(t, recSpec("stop", "minute", 60, "India Standard Time", nil))
	checkFirings(t, firings(s, utc(2026, 3, 1, 0, 10), 2), utc(2026, 3, 1, 0, 30), utc(2026, 3, 1, 1, 30))

	// Hours are elapsed time: two hours apart across the DST change.
	sc = recSpec("stop", "hour", 2, "Pacific Standard Time", nil)
	sc.Trigger.StartTime = "2026-03-07T23:30:00"
	checkFirings(t, firings(mustCompile(t, sc), time.Time{}, 3),
		utc(2026, 3, 8, 7, 30), utc(2026, 3, 8, 9, 30), utc(2026, 3, 8, 11, 30)) // 23:30 PST, 01:30 PST, 04:30 PDT

	// Minutes of the hour are the zone's: 05:45 and 06:15 in India are
	// 00:15 and 00:45 UTC.
	s = mustCompile(t, recSpec("stop", "hour", 1, "India Standard Time", &compute.RecurrencePattern{Minutes: compute.IntList{45, 15}}))
	checkFirings(t, firings(s, utc(2026, 3, 1, 0, 10), 3), utc(2026, 3, 1, 0, 15), utc(2026, 3, 1, 0, 45), utc(2026, 3, 1, 1, 15))
}
