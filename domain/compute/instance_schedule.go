package compute

import "github.com/shoal-ml/shoal/domain/schedule"

// Schedule actions and states, canonical (lower-case) spelling; Azure's
// `Start`/`Stop`/`Enabled`/`Disabled` are accepted on input.
const (
	ScheduleActionStart  = "start"
	ScheduleActionStop   = "stop"
	ScheduleEnabled      = "enabled"
	ScheduleDisabled     = "disabled"
	TriggerCron          = schedule.Cron
	TriggerRecurrence    = schedule.Recurrence
	MaxInstanceSchedules = 4
)

// ComputeSchedules is a compute instance's `schedules` key.
type ComputeSchedules struct {
	ComputeStartStop []*ComputeStartStopSchedule `json:"compute_start_stop,omitempty"`
}

// ComputeStartStopSchedule starts or stops an instance when its trigger
// fires (YAML `schedules.compute_start_stop[]`).
type ComputeStartStopSchedule struct {
	// Action is ScheduleActionStart or ScheduleActionStop.
	Action string `json:"action"`
	// State is ScheduleEnabled (default) or ScheduleDisabled.
	State   string           `json:"state,omitempty"`
	Trigger *ScheduleTrigger `json:"trigger"`
	// ScheduleID is assigned by the server (read-only).
	ScheduleID string `json:"schedule_id,omitempty"`
}

// ScheduleTrigger says when a schedule fires; the type is every
// schedule's (domain/schedule), an instance's start/stop schedules, a
// cluster's scale windows and job schedules alike.
type ScheduleTrigger = schedule.Trigger

// RecurrencePattern is a recurrence's `schedule` (domain/schedule).
type RecurrencePattern = schedule.RecurrencePattern

// IntList is a list of integers that also accepts a single integer
// (domain/schedule).
type IntList = schedule.IntList

// StringList is a list of strings that also accepts a single string
// (domain/schedule).
type StringList = schedule.StringList
