package schedule

import (
	"encoding/json"
	"fmt"
)

// Trigger types, canonical (lower-case) spelling; Azure's `Cron` and
// `Recurrence` are accepted on input.
const (
	Cron       = "cron"
	Recurrence = "recurrence"
)

// Trigger says when a schedule fires: a five-field cron
// expression, or a recurrence (Logic Apps' recurrence schema), each in a
// time zone (Windows names such as "Pacific Standard Time" or IANA names).
type Trigger struct {
	// Type is Cron or Recurrence.
	Type string `json:"type"`
	// Expression is the cron expression (cron triggers).
	Expression string `json:"expression,omitempty"`
	// StartTime ("2021-03-10T21:21:07", local to TimeZone): the schedule
	// does not fire before it.
	StartTime string `json:"start_time,omitempty"`
	// EndTime, when set, is when the schedule stops firing.
	EndTime string `json:"end_time,omitempty"`
	// TimeZone is a Windows or IANA time-zone name; default UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Frequency (minute|hour|day|week|month) and Interval are the
	// recurrence's period (recurrence triggers).
	Frequency string `json:"frequency,omitempty"`
	Interval  int    `json:"interval,omitempty"`
	// Schedule narrows a recurrence to hours, minutes and week days.
	Schedule *RecurrencePattern `json:"schedule,omitempty"`
}

// RecurrencePattern is a recurrence's `schedule`: at these hours and
// minutes, on these week days (names, any case) or month days.
type RecurrencePattern struct {
	Hours     IntList    `json:"hours,omitempty"`
	Minutes   IntList    `json:"minutes,omitempty"`
	WeekDays  StringList `json:"week_days,omitempty"`
	MonthDays IntList    `json:"month_days,omitempty"`
}

// IntList is a list of integers that also accepts a single integer, as the
// Python SDK writes `hours=15` next to `minutes=[30]`.
type IntList []int

// UnmarshalJSON accepts `15` and `[15, 16]`.
func (l *IntList) UnmarshalJSON(b []byte) error {
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*l = IntList{one}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("must be an integer or a list of integers")
	}
	*l = many
	return nil
}

// StringList is a list of strings that also accepts a single string
// (`week_days: Friday`).
type StringList []string

// UnmarshalJSON accepts `"Friday"` and `["Friday", "Monday"]`.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("must be a string or a list of strings")
	}
	*l = many
	return nil
}
