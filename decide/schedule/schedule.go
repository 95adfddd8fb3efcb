package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	dschedule "github.com/shoal-ml/shoal/domain/schedule"
)

// Schedule is one compiled start/stop schedule. It is immutable and safe
// for concurrent use.
type Schedule struct {
	action  string
	enabled bool
	loc     *time.Location
	start   time.Time // zero: none; truncated to the minute
	end     time.Time // zero: none
	when    firings
	desc    string
}

// Action is shoal.ScheduleActionStart or shoal.ScheduleActionStop.
func (s *Schedule) Action() string { return s.action }

// Enabled reports whether the schedule fires at all (state enabled).
func (s *Schedule) Enabled() bool { return s.enabled }

// Location is the schedule's time zone.
func (s *Schedule) Location() *time.Location { return s.loc }

// String describes the trigger for events and messages, such as
// `cron "0 18 * * *" Pacific Standard Time` or `recurrence every week on
// Friday at 15:30 India Standard Time`.
func (s *Schedule) String() string { return s.desc }

// Next returns the schedule's first firing strictly after t, in the
// schedule's zone, or the zero time when there is none: disabled, past
// end_time, or a pattern that no date within nine years matches.
func (s *Schedule) Next(t time.Time) time.Time {
	if !s.enabled {
		return time.Time{}
	}
	if !s.start.IsZero() && t.Before(s.start) {
		// A firing exactly at start_time counts.
		t = s.start.Add(-time.Nanosecond)
	}
	f := s.when.next(t)
	if f.IsZero() || (!s.end.IsZero() && f.After(s.end)) {
		return time.Time{}
	}
	return f
}

// Prev returns the schedule's last firing at or before t, in the
// schedule's zone, or the zero time when there is none (disabled, before
// start_time).
func (s *Schedule) Prev(t time.Time) time.Time {
	if !s.enabled {
		return time.Time{}
	}
	if !s.end.IsZero() && t.After(s.end) {
		t = s.end
	}
	f := s.when.prev(t)
	if f.IsZero() || (!s.start.IsZero() && f.Before(s.start)) {
		return time.Time{}
	}
	return f
}

// Compile checks and compiles one schedule. Errors are *shoal.Error with
// code EINVALID and Field relative to the schedule ("action",
// "trigger.expression", "trigger.schedule.hours"). The input is not
// modified; Azure's spellings (Start, Enabled, Cron, Week) are accepted.
func Compile(sc *compute.ComputeStartStopSchedule) (*Schedule, error) {
	return compile(sc, "")
}

// Validate checks an instance's whole `schedules` key: at most
// shoal.MaxInstanceSchedules entries, each compiled; error fields are
// named from the spec's root ("schedules.compute_start_stop[1].trigger.expression").
func Validate(sc *compute.ComputeSchedules) error {
	_, err := CompileAll(sc)
	return err
}

// CompileAll compiles an instance's schedules, in the spec's order (the
// index of each is its Firing.Index), with Validate's errors. A nil key
// compiles to none.
func CompileAll(sc *compute.ComputeSchedules) ([]*Schedule, error) {
	if sc == nil {
		return nil, nil
	}
	if n := len(sc.ComputeStartStop); n > compute.MaxInstanceSchedules {
		return nil, core.FieldErrorf("schedules.compute_start_stop", "at most %s schedules are allowed per compute instance, got %d", spell(compute.MaxInstanceSchedules), n)
	}
	out := make([]*Schedule, 0, len(sc.ComputeStartStop))
	for i, x := range sc.ComputeStartStop {
		s, err := compile(x, fmt.Sprintf("schedules.compute_start_stop[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// compile is Compile with error fields prefixed by prefix, so that
// messages read well wherever the schedule sits.
func compile(sc *compute.ComputeStartStopSchedule, prefix string) (*Schedule, error) {
	field := func(name, format string, args ...any) error {
		return core.FieldErrorf(joinField(prefix, name), format, args...)
	}
	if sc == nil {
		return nil, field("", "must be a schedule with action and trigger")
	}
	s := &Schedule{enabled: true}
	switch a := strings.ToLower(strings.TrimSpace(sc.Action)); a {
	case compute.ScheduleActionStart, compute.ScheduleActionStop:
		s.action = a
	case "":
		return nil, field("action", "is required: start or stop")
	default:
		return nil, field("action", "must be start or stop, got %q", sc.Action)
	}
	switch strings.ToLower(strings.TrimSpace(sc.State)) {
	case "", compute.ScheduleEnabled:
	case compute.ScheduleDisabled:
		s.enabled = false
	default:
		return nil, field("state", "must be enabled or disabled, got %q", sc.State)
	}
	t, err := compileTrigger(sc.Trigger, field)
	if err != nil {
		return nil, err
	}
	t.action, t.enabled = s.action, s.enabled
	return t, nil
}

// CompileTrigger checks and compiles a trigger alone (a job schedule's, a
// cluster's scale window's): the Schedule it returns is enabled and has
// no action. Errors are *core.Error with code EINVALID and Field
// prefixed by prefix ("trigger.expression" under prefix "" reads
// "trigger.expression"; under "scale_schedules[0]",
// "scale_schedules[0].trigger.expression").
func CompileTrigger(tr *dschedule.Trigger, prefix string) (*Schedule, error) {
	return compileTrigger(tr, func(name, format string, args ...any) error {
		return core.FieldErrorf(joinField(prefix, name), format, args...)
	})
}

// compileTrigger compiles a trigger, naming fields through field.
func compileTrigger(tr *dschedule.Trigger, field func(name, format string, args ...any) error) (*Schedule, error) {
	s := &Schedule{enabled: true}
	if tr == nil {
		return nil, field("trigger", "is required: a cron or recurrence trigger")
	}
	kind := strings.ToLower(strings.TrimSpace(tr.Type))
	switch kind {
	case dschedule.Cron, dschedule.Recurrence:
	case "":
		return nil, field("trigger.type", "is required: cron or recurrence")
	default:
		return nil, field("trigger.type", "must be cron or recurrence, got %q", tr.Type)
	}
	loc, err := LoadLocation(tr.TimeZone)
	if err != nil {
		return nil, field("trigger.time_zone", "%s", core.ErrorMessage(err))
	}
	s.loc = loc
	if s.start, err = parseTime(tr.StartTime, loc); err != nil {
		return nil, field("trigger.start_time", "%v", err)
	}
	// Firings are whole minutes: a start_time of 21:21:07 lets 21:21 fire.
	s.start = s.start.Truncate(time.Minute)
	if s.end, err = parseTime(tr.EndTime, loc); err != nil {
		return nil, field("trigger.end_time", "%v", err)
	}
	if !s.start.IsZero() && !s.end.IsZero() && !s.end.After(s.start) {
		return nil, field("trigger.end_time", "must be after start_time (%s), got %s", tr.StartTime, tr.EndTime)
	}
	zone := strings.TrimSpace(tr.TimeZone)
	if zone == "" {
		zone = "UTC"
	}

	if kind == dschedule.Cron {
		switch {
		case strings.TrimSpace(tr.Frequency) != "":
			return nil, field("trigger.frequency", "is not used with a cron trigger (it belongs to recurrence triggers)")
		case tr.Interval != 0:
			return nil, field("trigger.interval", "is not used with a cron trigger (it belongs to recurrence triggers)")
		case !emptyPattern(tr.Schedule):
			return nil, field("trigger.schedule", "is not used with a cron trigger (it belongs to recurrence triggers)")
		}
		c, err := compileCron(tr.Expression, loc)
		if err != nil {
			return nil, field("trigger.expression", "%v", err)
		}
		s.when = s.bound(c)
		s.desc = fmt.Sprintf("cron %q %s", strings.Join(strings.Fields(tr.Expression), " "), zone)
		return s, nil
	}
	if strings.TrimSpace(tr.Expression) != "" {
		return nil, field("trigger.expression", "is not used with a recurrence trigger (it belongs to cron triggers)")
	}
	w, r, err := compileRecurrence(tr, loc, s.start, field)
	if err != nil {
		return nil, err
	}
	if c, ok := w.(*calendar); ok {
		w = s.bound(c)
	}
	s.when = w
	s.desc = fmt.Sprintf("recurrence %s %s", r.describe(), zone)
	return s, nil
}

// bound limits a calendar's walk to the days around start and end times.
func (s *Schedule) bound(c *calendar) *calendar {
	c.firstDay, c.lastDay = noFirstDay, noLastDay
	if !s.start.IsZero() {
		c.firstDay = dayOf(s.start.In(s.loc)) - 1
	}
	if !s.end.IsZero() {
		c.lastDay = dayOf(s.end.In(s.loc)) + 1
	}
	return c
}

func emptyPattern(p *dschedule.RecurrencePattern) bool {
	return p == nil || len(p.Hours)+len(p.Minutes)+len(p.WeekDays)+len(p.MonthDays) == 0
}

func joinField(prefix, name string) string {
	switch {
	case prefix == "" && name == "":
		return "schedule"
	case prefix == "":
		return name
	case name == "":
		return prefix
	}
	return prefix + "." + name
}

// spell writes small counts in words, as messages read them ("at most four").
func spell(n int) string {
	if words := [...]string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}; n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}
