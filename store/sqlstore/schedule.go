package sqlstore

import (
	"github.com/shoal-ml/shoal/domain/schedule"
	"github.com/shoal-ml/shoal/store/sqlstore/schedstore"
)

// Job schedules: the queries are package schedstore's; these methods
// check that the transaction may write and hand it over.

// PutJobSchedule creates or replaces a job schedule.
func (t *tx) PutJobSchedule(s *schedule.JobSchedule) error {
	if err := t.writable("put job schedule"); err != nil {
		return err
	}
	return schedstore.Put(querier{t}, s, t.now)
}

// GetJobSchedule returns a job schedule. Returns ENOTFOUND.
func (t *tx) GetJobSchedule(workspace, name string) (*schedule.JobSchedule, error) {
	return schedstore.Get(querier{t}, workspace, name)
}

// ListJobSchedules returns a workspace's job schedules by name; ""
// every workspace's.
func (t *tx) ListJobSchedules(workspace string) ([]*schedule.JobSchedule, error) {
	return schedstore.List(querier{t}, workspace)
}

// DeleteJobSchedule removes a job schedule. Returns ENOTFOUND.
func (t *tx) DeleteJobSchedule(workspace, name string) error {
	if err := t.writable("delete job schedule"); err != nil {
		return err
	}
	return schedstore.Delete(querier{t}, workspace, name)
}
