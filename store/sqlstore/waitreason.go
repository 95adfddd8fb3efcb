package sqlstore

import (
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store/sqlstore/waitstore"
)

// Jobs' wait reasons: the queries are package waitstore's.

// GetWaitReason returns a job's wait reason. Returns ENOTFOUND.
func (t *tx) GetWaitReason(workspace, job string) (*jobkind.WaitReason, error) {
	return waitstore.Get(querier{t}, workspace, job)
}

// ListWaitReasons returns the wait reasons of a workspace's jobs ("" for
// all), ordered by workspace and job.
func (t *tx) ListWaitReasons(workspace string) ([]*jobkind.WaitReason, error) {
	return waitstore.List(querier{t}, workspace)
}

// PutWaitReasons adds or replaces reasons, in batched statements.
func (t *tx) PutWaitReasons(rs []*jobkind.WaitReason) error {
	if err := t.writable("put wait reasons"); err != nil {
		return err
	}
	return waitstore.Put(querier{t}, rs)
}

// DeleteWaitReasons removes the reasons of the jobs rs name, in batched
// statements.
func (t *tx) DeleteWaitReasons(rs []*jobkind.WaitReason) error {
	if err := t.writable("delete wait reasons"); err != nil {
		return err
	}
	return waitstore.Delete(querier{t}, rs)
}
