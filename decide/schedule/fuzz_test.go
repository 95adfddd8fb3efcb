package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// FuzzCompile: Compile never panics, and what it accepts evaluates
// consistently: Next is strictly after, Prev at or before, each firing is
// its own Prev and Due in the window that ends at it.
func FuzzCompile(f *testing.F) {
	f.Add("Stop", "", "Cron", "0 18 * * *", "2021-03-10T21:21:07", "", "Pacific Standard Time", "", 0, []byte{}, []byte{}, "", []byte{})
	f.Add("start", "Enabled", "Recurrence", "", "", "", "India Standard Time", "Week", 1, []byte{15}, []byte{30}, "Friday", []byte{})
	f.Add("stop", "", "recurrence", "", "", "", "UTC", "Day", 1, []byte{17}, []byte{0}, "", []byte{})
	f.Add("stop", "", "recurrence", "", "2026-01-31", "2027-01-01", "Lord Howe Standard Time", "month", 2, []byte{2}, []byte{15, 45}, "", []byte{31, 29})
	f.Add("stop", "", "cron", "TZ=UTC", "", "", "", "", 0, []byte{}, []byte{}, "", []byte{})
	f.Add("stop", "", "cron", "*/7 1-3 29 2 SUN,7", "", "", "Pacific SA Standard Time", "", 0, []byte{}, []byte{}, "", []byte{})
	f.Add("stop", "", "recurrence", "", "2026-03-08T02:30:00", "", "america/los_angeles", "hour", 5, []byte{}, []byte{59}, "", []byte{})
	f.Fuzz(func(t *testing.T, action, state, typ, expr, start, end, zone, freq string, interval int, hours, minutes []byte, weekDays string, monthDays []byte) {
		ints := func(b []byte) compute.IntList {
			var out compute.IntList
			for _, x := range b {
				out = append(out, int(int8(x)))
			}
			return out
		}
		sc := &compute.ComputeStartStopSchedule{Action: action, State: state, Trigger: &compute.ScheduleTrigger{
			Type: typ, Expression: expr, StartTime: start, EndTime: end, TimeZone: zone, Frequency: freq, Interval: interval,
		}}
		if len(hours)+len(minutes)+len(weekDays)+len(monthDays) > 0 {
			p := &compute.RecurrencePattern{Hours: ints(hours), Minutes: ints(minutes), MonthDays: ints(monthDays)}
			if weekDays != "" {
				p.WeekDays = strings.Split(weekDays, ",")
			}
			sc.Trigger.Schedule = p
		}
		s, err := schedule.Compile(sc)
		if err != nil {
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) == "" {
				t.Fatalf("error without code or field: %v", err)
			}
			return
		}
		_ = s.String()
		for _, at := range []time.Time{utc(2026, 3, 8, 9, 59), utc(2026, 11, 1, 8, 45), utc(2021, 3, 10, 0, 0)} {
			n := s.Next(at)
			if !n.IsZero() {
				if !n.After(at) {
					t.Fatalf("Next(%s) = %s, not after", at, n)
				}
				if p := s.Prev(n); !p.Equal(n) {
					t.Fatalf("Prev(Next(%s) = %s) = %s", at, n, p)
				}
				if d, ok := s.Due(at, n); !ok || !d.Equal(n) {
					t.Fatalf("Due(%s, %s) = %s, %v", at, n, d, ok)
				}
			}
			if p := s.Prev(at); !p.IsZero() && p.After(at) {
				t.Fatalf("Prev(%s) = %s, after", at, p)
			}
		}
	})
}
