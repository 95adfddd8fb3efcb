package armcompute

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// armSchedules is an instance's schedules in ARM's shape.
type armSchedules struct {
	ComputeStartStop []armSchedule `json:"computeStartStop"`
}

type armSchedule struct {
	ID          string         `json:"id,omitempty"`
	Action      string         `json:"action,omitempty"`
	Status      string         `json:"status,omitempty"`
	TriggerType string         `json:"triggerType,omitempty"`
	Cron        *armCron       `json:"cron,omitempty"`
	Recurrence  *armRecurrence `json:"recurrence,omitempty"`
}

type armCron struct {
	Expression string `json:"expression,omitempty"`
	StartTime  string `json:"startTime,omitempty"`
	TimeZone   string `json:"timeZone,omitempty"`
}

type armRecurrence struct {
	Frequency string `json:"frequency,omitempty"`
	Interval  int    `json:"interval,omitempty"`
	StartTime string `json:"startTime,omitempty"`
	TimeZone  string `json:"timeZone,omitempty"`
	Schedule  *struct {
		Hours     []int    `json:"hours,omitempty"`
		Minutes   []int    `json:"minutes,omitempty"`
		WeekDays  []string `json:"weekDays,omitempty"`
		MonthDays []int    `json:"monthDays,omitempty"`
	} `json:"schedule,omitempty"`
}

// schedulesFrom reads ARM's schedules into Shoal's; the services check
// and normalise them (actions, states, cron, time zones) as they do YAML.
func schedulesFrom(raw json.RawMessage) (*compute.ComputeSchedules, error) {
	var a armSchedules
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, core.FieldErrorf("properties.properties.schedules", "%v", err)
	}
	out := &compute.ComputeSchedules{}
	for _, s := range a.ComputeStartStop {
		sc := &compute.ComputeStartStopSchedule{Action: strings.ToLower(s.Action), State: strings.ToLower(s.Status), Trigger: &compute.ScheduleTrigger{}}
		switch {
		case strings.EqualFold(s.TriggerType, "Cron") || (s.TriggerType == "" && s.Cron != nil):
			if s.Cron == nil {
				return nil, core.FieldErrorf("properties.properties.schedules.computeStartStop.cron", "is required with triggerType Cron")
			}
			sc.Trigger.Type, sc.Trigger.Expression, sc.Trigger.StartTime, sc.Trigger.TimeZone = compute.TriggerCron, s.Cron.Expression, s.Cron.StartTime, s.Cron.TimeZone
		case strings.EqualFold(s.TriggerType, "Recurrence") || (s.TriggerType == "" && s.Recurrence != nil):
			r := s.Recurrence
			if r == nil {
				return nil, core.FieldErrorf("properties.properties.schedules.computeStartStop.recurrence", "is required with triggerType Recurrence")
			}
			sc.Trigger.Type, sc.Trigger.Frequency, sc.Trigger.Interval = compute.TriggerRecurrence, strings.ToLower(r.Frequency), r.Interval
			sc.Trigger.StartTime, sc.Trigger.TimeZone = r.StartTime, r.TimeZone
			if p := r.Schedule; p != nil {
				sc.Trigger.Schedule = &compute.RecurrencePattern{Hours: p.Hours, Minutes: p.Minutes, WeekDays: p.WeekDays, MonthDays: p.MonthDays}
			}
		default:
			return nil, core.FieldErrorf("properties.properties.schedules.computeStartStop.triggerType", "%q is not Cron or Recurrence", s.TriggerType)
		}
		out.ComputeStartStop = append(out.ComputeStartStop, sc)
	}
	return out, nil
}

// schedulesTo writes Shoal's schedules in ARM's shape.
func schedulesTo(s *compute.ComputeSchedules) json.RawMessage {
	if s == nil || len(s.ComputeStartStop) == 0 {
		return nil
	}
	title := func(v string) string {
		if v == "" {
			return v
		}
		return strings.ToUpper(v[:1]) + v[1:]
	}
	var a armSchedules
	for _, sc := range s.ComputeStartStop {
		as := armSchedule{ID: sc.ScheduleID, Action: title(sc.Action), Status: title(sc.State)}
		if t := sc.Trigger; t != nil {
			as.TriggerType = title(t.Type)
			if t.Type == compute.TriggerCron {
				as.Cron = &armCron{Expression: t.Expression, StartTime: t.StartTime, TimeZone: t.TimeZone}
			} else {
				as.Recurrence = &armRecurrence{Frequency: title(t.Frequency), Interval: t.Interval, StartTime: t.StartTime, TimeZone: t.TimeZone}
				if p := t.Schedule; p != nil {
					as.Recurrence.Schedule = &struct {
						Hours     []int    `json:"hours,omitempty"`
						Minutes   []int    `json:"minutes,omitempty"`
						WeekDays  []string `json:"weekDays,omitempty"`
						MonthDays []int    `json:"monthDays,omitempty"`
					}{Hours: p.Hours, Minutes: p.Minutes, WeekDays: p.WeekDays, MonthDays: p.MonthDays}
				}
			}
		}
		a.ComputeStartStop = append(a.ComputeStartStop, as)
	}
	b, _ := json.Marshal(a)
	return b
}
