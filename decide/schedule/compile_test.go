package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/schedule"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// The instance package holds schedules through this interface.
var _ interface {
	Due(last, now time.Time) (time.Time, bool)
	Action() string
	Enabled() bool
	String() string
} = (*schedule.Schedule)(nil)

func TestCompileErrors(t *testing.T) {
	cron := func(mod func(*compute.ComputeStartStopSchedule)) *compute.ComputeStartStopSchedule {
		sc := cronSpec("Stop", "0 18 * * *", "Pacific Standard Time")
		mod(sc)
		return sc
	}
	rec := func(freq string, interval int, p *compute.RecurrencePattern, mod func(*compute.ScheduleTrigger)) *compute.ComputeStartStopSchedule {
		sc := recSpec("start", freq, interval, "UTC", p)
		if mod != nil {
			mod(sc.Trigger)
		}
		return sc
	}
	expr := func(e string) *compute.ComputeStartStopSchedule {
		return cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.Expression = e })
	}
	for _, c := range []struct {
		name  string
		sc    *compute.ComputeStartStopSchedule
		field string
		msg   string // a piece of the message
	}{
		{"nil", nil, "schedule", "action and trigger"},
		{"no action", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Action = "" }), "action", "required"},
		{"bad action", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Action = "restart" }), "action", "start or stop"},
		{"bad state", cron(func(sc *compute.ComputeStartStopSchedule) { sc.State = "paused" }), "state", "enabled or disabled"},
		{"no trigger", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger = nil }), "trigger", "cron or recurrence"},
		{"no type", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.Type = "" }), "trigger.type", "required"},
		{"bad type", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.Type = "once" }), "trigger.type", "cron or recurrence"},
		{"bad zone", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.TimeZone = "Mars Standard Time" }), "trigger.time_zone", `"Mars Standard Time"`},
		{"bad start", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.StartTime = "10/03/2021" }), "trigger.start_time", "2021-03-10T21:21:07"},
		{"bad end", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.EndTime = "tomorrow" }), "trigger.end_time", "2021-03-10T21:21:07"},
		{"end before start", cron(func(sc *compute.ComputeStartStopSchedule) {
			sc.Trigger.StartTime, sc.Trigger.EndTime = "2026-03-10T00:00:00", "2026-03-09"
		}), "trigger.end_time", "after start_time"},
		{"cron with frequency", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.Frequency = "day" }), "trigger.frequency", "recurrence"},
		{"cron with interval", cron(func(sc *compute.ComputeStartStopSchedule) { sc.Trigger.Interval = 2 }), "trigger.interval", "recurrence"},
		{"cron with schedule", cron(func(sc *compute.ComputeStartStopSchedule) {
			sc.Trigger.Schedule = &compute.RecurrencePattern{Hours: compute.IntList{1}}
		}), "trigger.schedule", "recurrence"},
		{"no expression", expr("  "), "trigger.expression", "required"},
		{"descriptor", expr("@daily"), "trigger.expression", "descriptors"},
		{"every", expr("@every 1h"), "trigger.expression", "descriptors"},
		{"tz prefix", expr("TZ=UTC 0 18 * * *"), "trigger.expression", "time_zone"},
		{"tz prefix without space", expr("CRON_TZ=UTC"), "trigger.expression", "time_zone"},
		{"seconds", expr("0 0 18 * * *"), "trigger.expression", "seconds"},
		{"four fields", expr("0 18 * *"), "trigger.expression", "five fields"},
		{"minute 60", expr("60 18 * * *"), "trigger.expression", "minute field"},
		{"hour 24", expr("0 24 * * *"), "trigger.expression", "hour field"},
		{"dom 0", expr("0 18 0 * *"), "trigger.expression", "day-of-month field"},
		{"month 13", expr("0 18 * 13 *"), "trigger.expression", "month field"},
		{"dow 8", expr("0 18 * * 8"), "trigger.expression", "day-of-week"},
		{"dow bad step", expr("0 18 * * 7/0"), "trigger.expression", "step"},
		{"letters", expr("a b c d e"), "trigger.expression", "minute field"},
		{"empty list", expr(", 18 * * *"), "trigger.expression", "no value"},
		{"feb 30", expr("0 0 30 2 *"), "trigger.expression", "never fires"},
		{"recurrence with expression", rec("day", 1, nil, func(tr *compute.ScheduleTrigger) { tr.Expression = "0 18 * * *" }), "trigger.expression", "cron"},
		{"no frequency", rec("", 1, nil, nil), "trigger.frequency", "required"},
		{"bad frequency", rec("fortnight", 1, nil, nil), "trigger.frequency", "minute, hour, day, week or month"},
		{"negative interval", rec("day", -1, nil, nil), "trigger.interval", "between 1 and 500"},
		{"huge interval", rec("Week", 72, nil, nil), "trigger.interval", "between 1 and 71"},
		{"hour 24", rec("day", 1, &compute.RecurrencePattern{Hours: compute.IntList{8, 24}}, nil), "trigger.schedule.hours", "0 to 23, got 24"},
		{"hour -1", rec("day", 1, &compute.RecurrencePattern{Hours: compute.IntList{-1}}, nil), "trigger.schedule.hours", "got -1"},
		{"minute 60", rec("day", 1, &compute.RecurrencePattern{Minutes: compute.IntList{60}}, nil), "trigger.schedule.minutes", "0 to 59, got 60"},
		{"month day 32", rec("month", 1, &compute.RecurrencePattern{MonthDays: compute.IntList{32}}, nil), "trigger.schedule.month_days", "1 to 31, got 32"},
		{"month day 0", rec("month", 1, &compute.RecurrencePattern{MonthDays: compute.IntList{0}}, nil), "trigger.schedule.month_days", "got 0"},
		{"week day", rec("week", 1, &compute.RecurrencePattern{WeekDays: compute.StringList{"Friday", "Funday"}}, nil), "trigger.schedule.week_days", `"Funday"`},
		{"week days on a day recurrence", rec("day", 1, &compute.RecurrencePattern{WeekDays: compute.StringList{"Friday"}}, nil), "trigger.schedule.week_days", "not used with frequency day"},
		{"month days on a week recurrence", rec("week", 1, &compute.RecurrencePattern{WeekDays: compute.StringList{"Friday"}, MonthDays: compute.IntList{1}}, nil), "trigger.schedule.month_days", "not used with frequency week"},
		{"hours on an hour recurrence", rec("hour", 1, &compute.RecurrencePattern{Hours: compute.IntList{1}}, nil), "trigger.schedule.hours", "not used with frequency hour"},
		{"minutes on a minute recurrence", rec("minute", 5, &compute.RecurrencePattern{Minutes: compute.IntList{1}}, nil), "trigger.schedule.minutes", "not used with frequency minute"},
		{"week without days or start", rec("week", 1, &compute.RecurrencePattern{Hours: compute.IntList{9}}, nil), "trigger.schedule.week_days", "required"},
		{"month without days or start", rec("month", 1, nil, nil), "trigger.schedule.month_days", "required"},
		{"month days never", rec("month", 12, &compute.RecurrencePattern{MonthDays: compute.IntList{30, 31}}, func(tr *compute.ScheduleTrigger) {
			tr.StartTime = "2026-02-01T00:00:00"
		}), "trigger.schedule.month_days", "never fires"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := schedule.Compile(c.sc)
			if err == nil {
				t.Fatal("compiled")
			}
			if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != c.field || !strings.Contains(core.ErrorMessage(err), c.msg) {
				t.Errorf("got code=%s field=%q %q; want invalid, field %q, message with %q", core.ErrorCode(err), core.ErrorField(err), core.ErrorMessage(err), c.field, c.msg)
			}
			if !strings.HasPrefix(core.ErrorMessage(err), c.field+": ") {
				t.Errorf("message %q does not start with its field", core.ErrorMessage(err))
			}
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	for _, c := range []struct {
		name string
		sc   *compute.ComputeStartStopSchedule
		desc string
	}{
		{"Azure spellings", &compute.ComputeStartStopSchedule{Action: "Stop", State: "Enabled", Trigger: &compute.ScheduleTrigger{
			Type: "Cron", Expression: "0 18 * * *", StartTime: "2021-03-10T21:21:07", TimeZone: "Pacific Standard Time"}},
			`cron "0 18 * * *" Pacific Standard Time`},
		{"disabled", &compute.ComputeStartStopSchedule{Action: "START", State: "DISABLED", Trigger: &compute.ScheduleTrigger{Type: "CRON", Expression: "0 8 * * 1-5"}},
			`cron "0 8 * * 1-5" UTC`},
		{"names and 7", cronSpec("stop", "0  18 * JAN-DEC MON-FRI,7", ""), `cron "0 18 * JAN-DEC MON-FRI,7" UTC`},
		{"start with Z", &compute.ComputeStartStopSchedule{Action: "stop", Trigger: &compute.ScheduleTrigger{Type: "cron", Expression: "0 18 * * *", StartTime: "2021-03-10T21:21:07Z", EndTime: "2022-03-10T21:21:07+05:30"}},
			`cron "0 18 * * *" UTC`},
		{"date only", &compute.ComputeStartStopSchedule{Action: "stop", Trigger: &compute.ScheduleTrigger{Type: "cron", Expression: "0 18 * * *", StartTime: "2021-03-10", EndTime: "2021-03-11 08:00"}},
			`cron "0 18 * * *" UTC`},
		{"India recurrence", recSpec("start", "Week", 0, "India Standard Time", &compute.RecurrencePattern{Hours: compute.IntList{15}, Minutes: compute.IntList{30}, WeekDays: compute.StringList{"friday"}}),
			"recurrence every week on Friday at 15:30 India Standard Time"},
		{"short week days", recSpec("start", "week", 2, "", &compute.RecurrencePattern{Hours: compute.IntList{9}, WeekDays: compute.StringList{"FRI", "mon", "Monday"}}),
			"recurrence every 2 weeks on Monday, Friday at 09:00 UTC"},
		{"ARM day", recSpec("stop", "Day", 1, "UTC", &compute.RecurrencePattern{Hours: compute.IntList{17}, Minutes: compute.IntList{0}}),
			"recurrence every day at 17:00 UTC"},
		{"many times", recSpec("stop", "day", 1, "UTC", &compute.RecurrencePattern{Hours: compute.IntList{8, 12, 17}, Minutes: compute.IntList{0, 30, 45}}),
			"recurrence every day at hours 8, 12, 17 and minutes 0, 30, 45 UTC"},
		{"month", recSpec("stop", "month", 3, "UTC", &compute.RecurrencePattern{MonthDays: compute.IntList{15, 1}}),
			"recurrence every 3 months on day 1, 15 at 00:00 UTC"},
		{"ranges", recSpec("stop", "month", 1, "UTC", &compute.RecurrencePattern{MonthDays: compute.IntList{1, 2, 3, 4, 10, 11}, Hours: compute.IntList{9, 10}, Minutes: compute.IntList{0, 15, 30, 45}}),
			"recurrence every month on day 1-4, 10, 11 at hours 9, 10 and minutes 0, 15, 30, 45 UTC"},
		{"minutes", recSpec("stop", "minute", 30, "UTC", nil), "recurrence every 30 minutes UTC"},
		{"hours", recSpec("stop", "hour", 2, "UTC", &compute.RecurrencePattern{Minutes: compute.IntList{15}}), "recurrence every 2 hours at minutes 15 UTC"},
		{"empty schedule on cron", &compute.ComputeStartStopSchedule{Action: "stop", Trigger: &compute.ScheduleTrigger{Type: "cron", Expression: "0 18 * * *", Schedule: &compute.RecurrencePattern{}}},
			`cron "0 18 * * *" UTC`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mustCompile(t, c.sc)
			if s.String() != c.desc {
				t.Errorf("String() = %q, want %q", s.String(), c.desc)
			}
		})
	}
}

func TestCompileDoesNotModifyInput(t *testing.T) {
	sc := cronSpec("Stop", "0 18 * * *", "Pacific Standard Time")
	mustCompile(t, sc)
	if sc.Action != "Stop" || sc.Trigger.Type != "Cron" || sc.State != "" {
		t.Errorf("input modified: %+v", sc)
	}
}

func TestCompileActionAndState(t *testing.T) {
	s := mustCompile(t, cronSpec("Start", "0 8 * * *", ""))
	if s.Action() != compute.ScheduleActionStart || !s.Enabled() || s.Location() != time.UTC {
		t.Errorf("action %q enabled %v location %v", s.Action(), s.Enabled(), s.Location())
	}
}

func TestValidate(t *testing.T) {
	five := &compute.ComputeSchedules{}
	for range 5 {
		five.ComputeStartStop = append(five.ComputeStartStop, cronSpec("stop", "0 18 * * *", ""))
	}
	err := schedule.Validate(five)
	if core.ErrorField(err) != "schedules.compute_start_stop" || !strings.Contains(core.ErrorMessage(err), "at most four") {
		t.Errorf("five schedules: %v", err)
	}
	four := &compute.ComputeSchedules{ComputeStartStop: five.ComputeStartStop[:4]}
	if err := schedule.Validate(four); err != nil {
		t.Errorf("four schedules: %v", err)
	}
	list, err := schedule.CompileAll(four)
	if err != nil || len(list) != 4 {
		t.Errorf("CompileAll: %d, %v", len(list), err)
	}
	if err := schedule.Validate(nil); err != nil {
		t.Errorf("nil: %v", err)
	}

	bad := &compute.ComputeSchedules{ComputeStartStop: []*compute.ComputeStartStopSchedule{
		cronSpec("stop", "0 18 * * *", ""),
		cronSpec("start", "0 8 * * *", ""),
		cronSpec("stop", "0 25 * * *", ""),
	}}
	err = schedule.Validate(bad)
	want := "schedules.compute_start_stop[2].trigger.expression"
	if core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != want || !strings.HasPrefix(core.ErrorMessage(err), want+": ") {
		t.Errorf("bad expression: field %q: %v", core.ErrorField(err), err)
	}

	bad.ComputeStartStop[2] = recSpec("stop", "day", 1, "", &compute.RecurrencePattern{Hours: compute.IntList{30}})
	if f := core.ErrorField(schedule.Validate(bad)); f != "schedules.compute_start_stop[2].trigger.schedule.hours" {
		t.Errorf("bad hours: field %q", f)
	}
	bad.ComputeStartStop[1] = nil
	if f := core.ErrorField(schedule.Validate(bad)); f != "schedules.compute_start_stop[1]" {
		t.Errorf("nil entry: field %q", f)
	}
}
