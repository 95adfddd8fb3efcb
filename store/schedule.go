package store

import "github.com/shoal-ml/shoal/domain/schedule"

// ScheduleTx is the part of Tx that keeps job schedules (names compared
// case-insensitively).
type ScheduleTx interface {
	// PutJobSchedule creates a workspace's job schedule or replaces the
	// one of the same name.
	PutJobSchedule(s *schedule.JobSchedule) error
	// GetJobSchedule returns a job schedule. Returns ENOTFOUND.
	GetJobSchedule(workspace, name string) (*schedule.JobSchedule, error)
	// ListJobSchedules returns a workspace's job schedules ordered by
	// name; workspace "" lists every workspace's (the schedules loop).
	ListJobSchedules(workspace string) ([]*schedule.JobSchedule, error)
	// DeleteJobSchedule removes a job schedule. Returns ENOTFOUND.
	DeleteJobSchedule(workspace, name string) error
}
