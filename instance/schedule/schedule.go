// Package schedule compiles and evaluates compute instances' start/stop
// schedules: five-field cron expressions and Logic Apps style recurrences,
// each in a time zone given by its Windows or IANA name. Evaluation
// follows the zone's daylight saving time: a wall-clock time repeated when
// clocks go back fires once, and one skipped when they go forward fires
// once, right after the gap (Go's time.Date normalisation: 02:30 on the US
// spring-forward day is 03:30 PDT). It is pure: every function takes the
// times it compares.
package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
)

// Schedule is a compiled start/stop schedule.
type Schedule struct {
	action  string
	enabled bool
	loc     *time.Location
	start   time.Time // zero: none
	end     time.Time // zero: none
	match   matcher
	desc    string
}

// matcher yields the firings of a trigger.
type matcher interface {
	// next returns the first firing strictly after t, or zero.
	next(t time.Time, s *Schedule) time.Time
}

// Action is shoal.ScheduleActionStart or shoal.ScheduleActionStop.
func (s *Schedule) Action() string { return s.action }

// Enabled reports whether the schedule fires at all.
func (s *Schedule) Enabled() bool { return s.enabled }

// Location is the schedule's time zone.
func (s *Schedule) Location() *time.Location { return s.loc }

// String describes the schedule, e.g. `stop on cron "0 18 * * *" (Pacific Standard Time)`.
func (s *Schedule) String() string { return s.desc }

// Next returns the schedule's first firing strictly after t, or the zero
// time when there is none (past its end time, or disabled).
func (s *Schedule) Next(t time.Time) time.Time {
	if !s.enabled {
		return time.Time{}
	}
	if !s.start.IsZero() && t.Before(s.start) {
		t = s.start.Add(-time.Nanosecond)
	}
	n := s.match.next(t, s)
	if n.IsZero() || (!s.end.IsZero() && n.After(s.end)) {
		return time.Time{}
	}
	return n
}

// maxLookBack bounds how far back Due looks: older firings are not worth
// carrying out, and a minute-frequency schedule must not be stepped
// through for years.
const maxLookBack = 48 * time.Hour

// Due returns the latest firing in (last, now], if any: a controller that
// evaluates schedules now and then — or after a server was down for
// hours — carries out at most one firing per schedule, never a backlog.
func (s *Schedule) Due(last, now time.Time) (time.Time, bool) {
	if !now.After(last) || !s.enabled {
		return time.Time{}, false
	}
	if now.Sub(last) > maxLookBack {
		last = now.Add(-maxLookBack)
	}
	var found time.Time
	for t := s.Next(last); !t.IsZero() && !t.After(now); t = s.Next(t) {
		found = t
	}
	return found, !found.IsZero()
}

// Compile checks and compiles one schedule. Errors are EINVALID and name
// the field relative to the schedule ("trigger.expression").
func Compile(sc *shoal.ComputeStartStopSchedule) (*Schedule, error) {
	if sc == nil || sc.Trigger == nil {
		return nil, shoal.FieldErrorf("trigger", "is required: a cron or recurrence trigger")
	}
	s := &Schedule{enabled: true}
	switch strings.ToLower(strings.TrimSpace(sc.Action)) {
	case shoal.ScheduleActionStart, shoal.ScheduleActionStop:
		s.action = strings.ToLower(strings.TrimSpace(sc.Action))
	default:
		return nil, shoal.FieldErrorf("action", "must be start or stop, got %q", sc.Action)
	}
	switch strings.ToLower(strings.TrimSpace(sc.State)) {
	case "", shoal.ScheduleEnabled:
	case shoal.ScheduleDisabled:
		s.enabled = false
	default:
		return nil, shoal.FieldErrorf("state", "must be enabled or disabled, got %q", sc.State)
	}
	tr := sc.Trigger
	loc, err := LoadLocation(tr.TimeZone)
	if err != nil {
		return nil, shoal.FieldErrorf("trigger.time_zone", "%s", shoal.ErrorMessage(err))
	}
	s.loc = loc
	if s.start, err = parseTime(tr.StartTime, loc); err != nil {
		return nil, shoal.FieldErrorf("trigger.start_time", "%s", err.Error())
	}
	if s.end, err = parseTime(tr.EndTime, loc); err != nil {
		return nil, shoal.FieldErrorf("trigger.end_time", "%s", err.Error())
	}
	if !s.start.IsZero() && !s.end.IsZero() && !s.end.After(s.start) {
		return nil, shoal.FieldErrorf("trigger.end_time", "must be after start_time")
	}
	zone := tr.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	switch strings.ToLower(strings.TrimSpace(tr.Type)) {
	case shoal.TriggerCron:
		m, err := parseCron(tr.Expression)
		if err != nil {
			return nil, err
		}
		s.match = m
		s.desc = fmt.Sprintf("%s on cron %q (%s)", s.action, strings.TrimSpace(tr.Expression), zone)
	case shoal.TriggerRecurrence:
		m, err := parseRecurrence(tr, s)
		if err != nil {
			return nil, err
		}
		s.match = m
		s.desc = fmt.Sprintf("%s on recurrence %s (%s)", s.action, m.describe(), zone)
	default:
		return nil, shoal.FieldErrorf("trigger.type", "must be cron or recurrence, got %q", tr.Type)
	}
	if !s.enabled {
		s.desc += ", disabled"
	}
	return s, nil
}

// Validate checks an instance's whole `schedules` key: at most four
// schedules, each compiled; fields are named from the document's root
// ("schedules.compute_start_stop[1].trigger.expression").
func Validate(sc *shoal.ComputeSchedules) error {
	_, err := CompileAll(sc)
	return err
}

// CompileAll compiles every schedule of an instance, in order.
func CompileAll(sc *shoal.ComputeSchedules) ([]*Schedule, error) {
	if sc == nil {
		return nil, nil
	}
	if n := len(sc.ComputeStartStop); n > shoal.MaxInstanceSchedules {
		return nil, shoal.FieldErrorf("schedules.compute_start_stop", "at most %d schedules are allowed per compute instance, got %d", shoal.MaxInstanceSchedules, n)
	}
	out := make([]*Schedule, 0, len(sc.ComputeStartStop))
	for i, x := range sc.ComputeStartStop {
		s, err := Compile(x)
		if err != nil {
			prefix := fmt.Sprintf("schedules.compute_start_stop[%d]", i)
			field := prefix
			if f := shoal.ErrorField(err); f != "" {
				field = prefix + "." + f
			}
			msg := strings.TrimPrefix(shoal.ErrorMessage(err), shoal.ErrorField(err)+": ")
			return nil, shoal.FieldErrorf(field, "%s", msg)
		}
		out = append(out, s)
	}
	return out, nil
}

// parseTime reads a start or end time: "2021-03-10T21:21:07" local to the
// schedule's zone (Azure's form), or with an offset or Z; "" is none.
func parseTime(v string, loc *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time such as 2021-03-10T21:21:07", v)
}

// wallTimes calls fn with each (hour, minute) wall-clock time of day d
// (in loc) that matches, in order, as instants; a time skipped by a DST
// gap comes out normalised forward by time.Date, and a repeated one once.
func wallTimes(y int, m time.Month, d int, loc *time.Location, hours, minutes []int, fn func(time.Time) bool) bool {
	var prev time.Time
	for _, h := range hours {
		for _, mi := range minutes {
			t := time.Date(y, m, d, h, mi, 0, 0, loc)
			if !prev.IsZero() && !t.After(prev) {
				continue // normalisation folded two wall times onto one instant
			}
			prev = t
			if !fn(t) {
				return false
			}
		}
	}
	return true
}
