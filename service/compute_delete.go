package service

import (
	"context"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
)

// FailQueuedJobs fails the jobs still queued on a compute being deleted:
// they can never run.
func (s *Services) FailQueuedJobs(ctx context.Context, tx store.Tx, c *compute.Compute, out *JobOutcomes) error {
	jobs, err := tx.ListJobs(job.JobFilter{Workspace: c.Workspace, Compute: c.Name, Statuses: []string{job.JobQueued}})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		before := markOf(j)
		st, err := jobrun.Step(j, nil, jobrun.Event{Kind: jobrun.ComputeDeleted}, tx.Now())
		if err != nil {
			return err
		}
		if !st.Changed {
			continue
		}
		*j = st.Job
		j.Version++
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		if err := appendStepEvents(ctx, tx, j, st.Events); err != nil {
			return err
		}
		out.note(before, j)
	}
	return nil
}
