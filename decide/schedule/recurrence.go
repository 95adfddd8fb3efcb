package schedule

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

// Recurrence frequencies, canonical spelling; any case is accepted.
const (
	FrequencyMinute = "minute"
	FrequencyHour   = "hour"
	FrequencyDay    = "day"
	FrequencyWeek   = "week"
	FrequencyMonth  = "month"
)

// maxInterval bounds interval per frequency — about a year and a half for
// the calendar ones, 50 days for minutes — which keeps every search for a
// firing short and the arithmetic far from overflow.
var maxInterval = map[string]int{
	FrequencyMinute: 72000,
	FrequencyHour:   12000,
	FrequencyDay:    500,
	FrequencyWeek:   71,
	FrequencyMonth:  16,
}

var weekdayNames = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// recurrence is a recurrence trigger checked and with its defaults filled
// in, ready to compile and describe.
type recurrence struct {
	freq           string
	interval       int
	hours, minutes []int
	weekDays       []time.Weekday // week
	monthDays      []int          // month
	explicitTimes  bool
}

// compileRecurrence checks a recurrence trigger and compiles it, following
// Logic Apps' recurrence:
//
//   - minute, hour: every interval minutes or hours of elapsed time from
//     start_time; hour also takes schedule.minutes (those minutes of every
//     interval-th hour, the hours counted from start_time's hour);
//   - day, week, month: every interval-th day, week (Monday to Sunday) or
//     month, at each schedule.hours × schedule.minutes, on schedule.week_days
//     (week) or schedule.month_days (month; a day the month lacks, such as
//     the 31st in April, is skipped);
//   - hours, minutes, week days and month days not given are start_time's
//     (00:00 without a start time).
//
// Intervals are counted from start_time. Without one they are counted
// from the Unix epoch — 1970-01-01 00:00 in the zone, weeks from Monday
// 1969-12-29, months from January 1970 — so which weeks an "every 2
// weeks" recurrence fires in is fixed, not the week the schedule happened
// to be saved. A weekly recurrence without start_time needs week_days, and
// a monthly one month_days, as there is no day to take them from.
func compileRecurrence(tr *dschedule.Trigger, loc *time.Location, start time.Time, field func(string, string, ...any) error) (firings, *recurrence, error) {
	r := &recurrence{freq: strings.ToLower(strings.TrimSpace(tr.Frequency)), interval: tr.Interval}
	limit, ok := maxInterval[r.freq]
	switch {
	case r.freq == "":
		return nil, nil, field("trigger.frequency", "is required for a recurrence trigger: minute, hour, day, week or month")
	case !ok:
		return nil, nil, field("trigger.frequency", "must be minute, hour, day, week or month, got %q", tr.Frequency)
	}
	if r.interval == 0 {
		r.interval = 1
	}
	if r.interval < 1 || r.interval > limit {
		return nil, nil, field("trigger.interval", "must be between 1 and %d for frequency %s, got %d", limit, r.freq, tr.Interval)
	}
	if err := r.readPattern(tr.Schedule, field); err != nil {
		return nil, nil, err
	}

	// The anchor: start_time on the zone's clock, or the epoch.
	anchor := wallClock(0, 0, 0, 0, loc)
	if !start.IsZero() {
		anchor = start.In(loc)
	}
	r.explicitTimes = len(r.hours) > 0 || len(r.minutes) > 0
	if len(r.hours) == 0 {
		r.hours = []int{anchor.Hour()}
	}
	if len(r.minutes) == 0 {
		r.minutes = []int{anchor.Minute()}
	}
	anchorDay := dayOf(anchor)
	switch r.freq {
	case FrequencyMinute, FrequencyHour:
		unit := int64(60)
		offsets := []int64{0}
		base := anchor.Unix()
		if r.freq == FrequencyHour {
			unit = 3600
			// The anchor's hour on the zone's clock, so minutes are the
			// clock's minutes also in zones offset by half an hour.
			base -= int64(anchor.Minute()*60 + anchor.Second())
			offsets = offsets[:0]
			for _, m := range r.minutes {
				offsets = append(offsets, int64(m)*60)
			}
		}
		return &elapsed{loc: loc, anchor: base, period: unit * int64(r.interval), offsets: offsets}, r, nil
	case FrequencyWeek:
		if len(r.weekDays) == 0 {
			if start.IsZero() {
				return nil, nil, field("trigger.schedule.week_days", "is required for frequency week without a start_time (the week days to fire on, such as [Monday, Friday])")
			}
			r.weekDays = []time.Weekday{anchor.Weekday()}
		}
	case FrequencyMonth:
		if len(r.monthDays) == 0 {
			if start.IsZero() {
				return nil, nil, field("trigger.schedule.month_days", "is required for frequency month without a start_time (the days of the month to fire on, such as [1, 15])")
			}
			r.monthDays = []int{anchor.Day()}
		}
		if !r.monthsHaveDay(anchor.Month()) {
			return nil, nil, field("trigger.schedule.month_days", "never fires: the months this recurrence runs in (every %d from %s) have none of the days %v", r.interval, anchor.Month(), r.monthDays)
		}
	}
	c := &calendar{loc: loc, hours: r.hours, minutes: r.minutes, firstDay: noFirstDay, lastDay: noLastDay}
	n := int64(r.interval)
	switch r.freq {
	case FrequencyDay:
		c.day = func(z int64) bool { return floorMod(z-anchorDay, n) == 0 }
	case FrequencyWeek:
		monday := anchorDay - int64((anchor.Weekday()+6)%7)
		var days [7]bool
		for _, d := range r.weekDays {
			days[d] = true
		}
		c.day = func(z int64) bool {
			return days[weekdayOf(z)] && floorMod(floorDiv(z-monday, 7), n) == 0
		}
	case FrequencyMonth:
		anchorMonth := int64(anchor.Year())*12 + int64(anchor.Month()-1)
		var days [32]bool
		for _, d := range r.monthDays {
			days[d] = true
		}
		c.day = func(z int64) bool {
			y, m, d := civilDate(z)
			return days[d] && floorMod(int64(y)*12+int64(m-1)-anchorMonth, n) == 0
		}
	}
	return c, r, nil
}

// readPattern checks schedule's lists against the frequency: each applies
// to the frequencies it can narrow, and is refused elsewhere rather than
// silently ignored.
func (r *recurrence) readPattern(p *dschedule.RecurrencePattern, field func(string, string, ...any) error) error {
	if p == nil {
		return nil
	}
	uses := map[string][]string{
		"hours":      {FrequencyDay, FrequencyWeek, FrequencyMonth},
		"minutes":    {FrequencyHour, FrequencyDay, FrequencyWeek, FrequencyMonth},
		"week_days":  {FrequencyWeek},
		"month_days": {FrequencyMonth},
	}
	for _, x := range []struct {
		name string
		n    int
	}{{"hours", len(p.Hours)}, {"minutes", len(p.Minutes)}, {"week_days", len(p.WeekDays)}, {"month_days", len(p.MonthDays)}} {
		if x.n > 0 && !slices.Contains(uses[x.name], r.freq) {
			return field("trigger.schedule."+x.name, "is not used with frequency %s; it applies to frequency %s", r.freq, strings.Join(uses[x.name], ", "))
		}
	}
	var err error
	if r.hours, err = intsIn(p.Hours, 0, 23, "trigger.schedule.hours", "hours of the day", field); err != nil {
		return err
	}
	if r.minutes, err = intsIn(p.Minutes, 0, 59, "trigger.schedule.minutes", "minutes of the hour", field); err != nil {
		return err
	}
	if r.monthDays, err = intsIn(p.MonthDays, 1, 31, "trigger.schedule.month_days", "days of the month", field); err != nil {
		return err
	}
	for _, w := range p.WeekDays {
		wd, ok := weekdayNames[strings.ToLower(strings.TrimSpace(w))]
		if !ok {
			return field("trigger.schedule.week_days", "%q is not a day of the week: Monday, Tuesday, ... Sunday (or Mon ... Sun)", w)
		}
		if !slices.Contains(r.weekDays, wd) {
			r.weekDays = append(r.weekDays, wd)
		}
	}
	// Monday first, as the week is counted.
	slices.SortFunc(r.weekDays, func(a, b time.Weekday) int { return int((a+6)%7) - int((b+6)%7) })
	return nil
}

// intsIn checks that every value is within [lo, hi] and returns them
// sorted without duplicates.
func intsIn(in []int, lo, hi int, name, what string, field func(string, string, ...any) error) ([]int, error) {
	for _, v := range in {
		if v < lo || v > hi {
			return nil, field(name, "must be %s, %d to %d, got %d", what, lo, hi, v)
		}
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// monthsHaveDay reports whether a monthly recurrence anchored in month
// m0 ever visits a month that has one of its days (February counted with
// 29 days).
func (r *recurrence) monthsHaveDay(m0 time.Month) bool {
	for k := 0; k < 12; k++ {
		m := time.Month((int(m0)-1+k*r.interval)%12 + 1)
		for _, d := range r.monthDays {
			if d <= maxMonthDays(m) {
				return true
			}
		}
	}
	return false
}

// describe is the recurrence in words: "every 2 weeks on Monday, Friday at
// 08:00, 18:00".
func (r *recurrence) describe() string {
	var b strings.Builder
	b.WriteString("every ")
	if r.interval != 1 {
		b.WriteString(strconv.Itoa(r.interval) + " " + r.freq + "s")
	} else {
		b.WriteString(r.freq)
	}
	switch r.freq {
	case FrequencyMinute:
		return b.String()
	case FrequencyHour:
		if r.explicitTimes {
			fmt.Fprintf(&b, " at minutes %s", joinInts(r.minutes))
		}
		return b.String()
	case FrequencyWeek:
		names := make([]string, len(r.weekDays))
		for i, d := range r.weekDays {
			names[i] = d.String()
		}
		fmt.Fprintf(&b, " on %s", strings.Join(names, ", "))
	case FrequencyMonth:
		fmt.Fprintf(&b, " on day %s", joinInts(r.monthDays))
	}
	if len(r.hours)*len(r.minutes) <= 6 {
		var times []string
		for _, h := range r.hours {
			for _, m := range r.minutes {
				times = append(times, fmt.Sprintf("%02d:%02d", h, m))
			}
		}
		fmt.Fprintf(&b, " at %s", strings.Join(times, ", "))
	} else {
		fmt.Fprintf(&b, " at hours %s and minutes %s", joinInts(r.hours), joinInts(r.minutes))
	}
	return b.String()
}

// joinInts writes sorted values, runs of three or more as ranges:
// "0-23", "1, 15".
func joinInts(v []int) string {
	var s []string
	for i := 0; i < len(v); {
		j := i
		for j+1 < len(v) && v[j+1] == v[j]+1 {
			j++
		}
		if j-i >= 2 {
			s = append(s, strconv.Itoa(v[i])+"-"+strconv.Itoa(v[j]))
		} else {
			for k := i; k <= j; k++ {
				s = append(s, strconv.Itoa(v[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(s, ", ")
}
