package service

import (
	"context"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/access"
	"github.com/shoal-ml/shoal/jobrun"
)

// FailQueuedJobs fails the jobs still queued on a compute being deleted:
// they can never run.
func (s *Services) FailQueuedJobs(ctx context.Context, tx shoal.Tx, c *shoal.Compute, out *JobOutcomes) error {
	jobs, err := tx.ListJobs(shoal.JobFilter{Workspace: c.Workspace, Compute: c.Name, Statuses: []string{shoal.JobQueued}})
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

// DeleteSystemIdentity removes a deleted compute's system-assigned identity
// and its role assignments, as Azure deletes it with the compute: a new
// compute of the same name must not inherit its rights.
func DeleteSystemIdentity(tx shoal.Tx, c *shoal.Compute) error {
	name := access.SystemIdentityName(c.Workspace, c.Name)
	id, err := tx.GetIdentity(name)
	if shoal.ErrorCode(err) == shoal.ENOTFOUND || (err == nil && !id.System) {
		return nil
	} else if err != nil {
		return err
	}
	list, err := tx.ListRoleAssignments(id.PrincipalID(), "")
	if err != nil {
		return err
	}
	for _, a := range list {
		if err := tx.DeleteRoleAssignment(a.ID); err != nil {
			return err
		}
	}
	return tx.DeleteIdentity(id.Name)
}
