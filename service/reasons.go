package service

import (
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// listReasonsAbove is how many queued jobs a view reads the reasons of
// one by one; above it, it reads the workspace's reasons at once.
const listReasonsAbove = 8

// withReasons sets the status reason of the queued jobs among jobs to why
// they wait, as the leader's latest scheduler pass said (live.WaitReasons:
// the same on every replica), as of tx, the jobs' transaction.
func (s *Services) withReasons(tx store.Tx, jobs ...*job.Job) error {
	var queued []*job.Job
	for _, j := range jobs {
		if j != nil && j.Status == job.JobQueued {
			queued = append(queued, j)
		}
	}
	if len(queued) == 0 {
		return nil
	}
	set := func(j *job.Job, r scheduler.Reason) {
		j.StatusReason, j.StatusReasonCode = r.Message(), string(r.Code())
	}
	if len(queued) <= listReasonsAbove {
		for _, j := range queued {
			r, ok, err := s.reasons.Get(tx, j.Workspace, j.Name)
			if err != nil {
				return err
			}
			if ok {
				set(j, r)
			}
		}
		return nil
	}
	byWorkspace := map[string]map[string]scheduler.Reason{}
	for _, j := range queued {
		rs, ok := byWorkspace[j.Workspace]
		if !ok {
			var err error
			if rs, err = s.reasons.List(tx, j.Workspace); err != nil {
				return err
			}
			byWorkspace[j.Workspace] = rs
		}
		if r, ok := rs[j.Workspace+"/"+j.Name]; ok {
			set(j, r)
		}
	}
	return nil
}
