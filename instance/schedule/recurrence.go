package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
)

// recurrenceMatcher fires as a Logic Apps recurrence does: every interval
// minutes or hours from the start time, or on every interval-th day, week
// or month at the schedule's hours and minutes (and week days or month
// days). The count of days, weeks or months starts at start_time, or at
// 2000-01-03 (a Monday) when there is none, so it is stable.
type recurrenceMatcher struct {
	freq           string
	interval       int
	hours, minutes []int
	weekDays       []time.Weekday
	monthDays      []int
	anchor         time.Time // in the schedule's zone
}

var weekdayNames = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

func parseRecurrence(tr *shoal.ScheduleTrigger, s *Schedule) (*recurrenceMatcher, error) {
	m := &recurrenceMatcher{freq: strings.ToLower(strings.TrimSpace(tr.Frequency)), interval: tr.Interval}
	switch m.freq {
	case "minute", "hour", "day", "week", "month":
	case "":
		return nil, shoal.FieldErrorf("trigger.frequency", "is required for a recurrence trigger: minute, hour, day, week or month")
	default:
		return nil, shoal.FieldErrorf("trigger.frequency", "must be minute, hour, day, week or month, got %q", tr.Frequency)
	}
	if m.interval == 0 {
		m.interval = 1
	}
	if m.interval < 1 || m.interval > 1000 {
		return nil, shoal.FieldErrorf("trigger.interval", "must be between 1 and 1000, got %d", tr.Interval)
	}
	m.anchor = s.start
	if m.anchor.IsZero() {
		m.anchor = time.Date(2000, 1, 3, 0, 0, 0, 0, s.loc)
	}
	m.anchor = m.anchor.In(s.loc)
	if p := tr.Schedule; p != nil {
		for _, h := range p.Hours {
			if h < 0 || h > 23 {
				return nil, shoal.FieldErrorf("trigger.schedule.hours", "must be between 0 and 23, got %d", h)
			}
		}
		for _, mi := range p.Minutes {
			if mi < 0 || mi > 59 {
				return nil, shoal.FieldErrorf("trigger.schedule.minutes", "must be between 0 and 59, got %d", mi)
			}
		}
		for _, d := range p.MonthDays {
			if d < 1 || d > 31 {
				return nil, shoal.FieldErrorf("trigger.schedule.month_days", "must be between 1 and 31, got %d", d)
			}
		}
		for _, w := range p.WeekDays {
			wd, ok := weekdayNames[strings.ToLower(strings.TrimSpace(w))]
			if !ok {
				return nil, shoal.FieldErrorf("trigger.schedule.week_days", "%q is not a day of the week (Monday ... Sunday)", w)
			}
			if !slices.Contains(m.weekDays, wd) {
				m.weekDays = append(m.weekDays, wd)
			}
		}
		m.hours, m.minutes, m.monthDays = sortedUnique(p.Hours), sortedUnique(p.Minutes), sortedUnique(p.MonthDays)
	}
	if len(m.weekDays) > 0 && m.freq != "week" {
		return nil, shoal.FieldErrorf("trigger.schedule.week_days", "apply to a weekly recurrence (frequency: week), not %s", m.freq)
	}
	if len(m.monthDays) > 0 && m.freq != "month" {
		return nil, shoal.FieldErrorf("trigger.schedule.month_days", "apply to a monthly recurrence (frequency: month), not %s", m.freq)
	}
	if len(m.hours) == 0 {
		m.hours = []int{m.anchor.Hour()}
	}
	if len(m.minutes) == 0 {
		m.minutes = []int{m.anchor.Minute()}
	}
	if m.freq == "week" && len(m.weekDays) == 0 {
		m.weekDays = []time.Weekday{m.anchor.Weekday()}
	}
	if m.freq == "month" && len(m.monthDays) == 0 {
		m.monthDays = []int{m.anchor.Day()}
	}
	return m, nil
}

func sortedUnique(in []int) []int {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

func (m *recurrenceMatcher) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "every %d %s", m.interval, m.freq)
	if m.freq == "minute" {
		return b.String()
	}
	if len(m.weekDays) > 0 {
		names := make([]string, len(m.weekDays))
		for i, d := range m.weekDays {
			names[i] = d.String()
		}
		fmt.Fprintf(&b, " on %s", strings.Join(names, ","))
	}
	if len(m.monthDays) > 0 {
		fmt.Fprintf(&b, " on day %v", m.monthDays)
	}
	if m.freq != "hour" {
		fmt.Fprintf(&b, " at hours %v", m.hours)
	}
	fmt.Fprintf(&b, " minutes %v", m.minutes)
	return b.String()
}

func (m *recurrenceMatcher) next(after time.Time, s *Schedule) time.Time {
	loc := s.loc
	switch m.freq {
	case "minute":
		step := time.Duration(m.interval) * time.Minute
		if after.Before(m.anchor) {
			return m.anchor
		}
		k := after.Sub(m.anchor)/step + 1
		return m.anchor.Add(k * step)
	case "hour":
		// At the listed minutes of every interval-th hour from the anchor
		// hour; hours are counted in elapsed time, so DST does not skew them.
		base := m.anchor.Truncate(time.Hour)
		start := after.Truncate(time.Hour)
		if start.Before(base) {
			start = base
		}
		for h := start; h.Sub(start) < time.Duration(m.interval+2)*time.Hour*2+48*time.Hour; h = h.Add(time.Hour) {
			if int(h.Sub(base)/time.Hour)%m.interval != 0 {
				continue
			}
			for _, mi := range m.minutes {
				t := h.Add(time.Duration(mi) * time.Minute)
				if t.After(after) && !t.Before(m.anchor) {
					return t
				}
			}
		}
		return time.Time{}
	}
	day := after.In(loc)
	if day.Before(m.anchor) {
		day = m.anchor
	}
	y, mo, d := day.Date()
	ay, am, ad := m.anchor.Date()
	anchorDay := time.Date(ay, am, ad, 12, 0, 0, 0, time.UTC)
	var found time.Time
	for i := 0; i < maxDays && found.IsZero(); i++ {
		date := time.Date(y, mo, d+i, 12, 0, 0, 0, loc)
		if !m.dayMatches(date, anchorDay) {
			continue
		}
		wallTimes(date.Year(), date.Month(), date.Day(), loc, m.hours, m.minutes, func(t time.Time) bool {
			if t.After(after) && !t.Before(m.anchor) {
				found = t
				return false
			}
			return true
		})
	}
	return found
}

// dayMatches reports whether a calendar day (noon, in the zone) is one the
// recurrence fires on; anchorDay is the anchor's date at noon UTC.
func (m *recurrenceMatcher) dayMatches(date, anchorDay time.Time) bool {
	cal := time.Date(date.Year(), date.Month(), date.Day(), 12, 0, 0, 0, time.UTC)
	days := int(cal.Sub(anchorDay).Hours() / 24)
	switch m.freq {
	case "day":
		return days%m.interval == 0
	case "week":
		if !slices.Contains(m.weekDays, date.Weekday()) {
			return false
		}
		// Weeks start on Monday; count them from the anchor's week.
		anchorMonday := anchorDay.AddDate(0, 0, -((int(anchorDay.Weekday()) + 6) % 7))
		weeks := int(cal.Sub(anchorMonday).Hours()/24) / 7
		return weeks%m.interval == 0
	case "month":
		if !slices.Contains(m.monthDays, date.Day()) {
			return false
		}
		months := (date.Year()-anchorDay.Year())*12 + int(date.Month()-anchorDay.Month())
		return months%m.interval == 0
	}
	return false
}
