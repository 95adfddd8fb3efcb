package schedule

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/shoal-ml/shoal"
)

// cronMatcher fires at the wall-clock times a five-field cron expression
// names, in the schedule's zone. robfig/cron parses the expression; the
// days are walked here so that DST gaps and repeats fire exactly once.
type cronMatcher struct {
	spec           *cron.SpecSchedule
	hours, minutes []int
}

const starBit = 1 << 63

// parseCron parses a standard five-field cron expression (minute hour
// day-of-month month day-of-week, Sunday = 0 or 7).
func parseCron(expr string) (*cronMatcher, error) {
	e := strings.TrimSpace(expr)
	if e == "" {
		return nil, shoal.FieldErrorf("trigger.expression", "is required for a cron trigger (five fields: minute hour day-of-month month day-of-week)")
	}
	if strings.HasPrefix(e, "@") || strings.Contains(e, "TZ=") {
		return nil, shoal.FieldErrorf("trigger.expression", "%q: use the five standard fields (minute hour day-of-month month day-of-week); descriptors such as @daily and time zones in the expression are not accepted (set time_zone)", expr)
	}
	if n := len(strings.Fields(e)); n != 5 {
		return nil, shoal.FieldErrorf("trigger.expression", "%q has %d fields; a cron expression has five: minute hour day-of-month month day-of-week", expr, n)
	}
	sched, err := cron.ParseStandard(e)
	if err != nil {
		return nil, shoal.FieldErrorf("trigger.expression", "%q is not a valid cron expression: %v", expr, err)
	}
	spec := sched.(*cron.SpecSchedule)
	m := &cronMatcher{spec: spec}
	for h := 0; h < 24; h++ {
		if spec.Hour&(1<<uint(h)) != 0 {
			m.hours = append(m.hours, h)
		}
	}
	for mi := 0; mi < 60; mi++ {
		if spec.Minute&(1<<uint(mi)) != 0 {
			m.minutes = append(m.minutes, mi)
		}
	}
	return m, nil
}

// dayMatches applies cron's day rule: when both day-of-month and
// day-of-week are restricted, either may match.
func (m *cronMatcher) dayMatches(t time.Time) bool {
	s := m.spec
	if s.Month&(1<<uint(t.Month())) == 0 {
		return false
	}
	dom := s.Dom&(1<<uint(t.Day())) != 0
	dow := s.Dow&(1<<uint(t.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// maxDays bounds the search for the next firing (Feb 29 on a Monday
// recurs within 28 years).
const maxDays = 366 * 30

func (m *cronMatcher) next(after time.Time, s *Schedule) time.Time {
	loc := s.loc
	day := after.In(loc)
	y, mo, d := day.Date()
	var found time.Time
	for i := 0; i < maxDays && found.IsZero(); i++ {
		date := time.Date(y, mo, d+i, 12, 0, 0, 0, loc)
		if !m.dayMatches(date) {
			continue
		}
		wallTimes(date.Year(), date.Month(), date.Day(), loc, m.hours, m.minutes, func(t time.Time) bool {
			if t.After(after) {
				found = t
				return false
			}
			return true
		})
	}
	return found
}
