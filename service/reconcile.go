package service

import (
	"context"
	"fmt"

	"github.com/shoal-ml/shoal"
)

// ReconcileComputes moves computes through their provisioning states: a
// Creating compute whose location and size are still valid becomes
// Succeeded (Failed with a provisioning error otherwise), and a Deleting
// compute with no nodes left is removed. It is idempotent and safe to call
// on every tick and after every change.
func (s *Services) ReconcileComputes(ctx context.Context) error {
	ctx = shoal.WithPrincipal(ctx, systemPrincipal)
	var out JobOutcomes
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		out.Reset()
		workspaces, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		for _, ws := range workspaces {
			computes, err := tx.ListComputes(shoal.ComputeFilter{Workspace: ws.Name})
			if err != nil {
				return err
			}
			for _, c := range computes {
				if err := s.reconcileCompute(ctx, tx, c, &out); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		s.Report(&out)
	}
	return err
}

func (s *Services) reconcileCompute(ctx context.Context, tx shoal.Tx, c *shoal.Compute, out *JobOutcomes) error {
	switch c.ProvisioningState {
	case shoal.ProvisioningCreating, shoal.ProvisioningUpdating:
		c.Version++
		c.ModifiedOn = tx.Now()
		kind, reason := shoal.EventProvisioned, "ready: nodes are created on demand"
		if err := s.checkPlacement(c); err != nil {
			c.ProvisioningState = shoal.ProvisioningFailed
			c.ProvisioningErrors = []shoal.ProvisioningError{{Code: shoal.ErrorCode(err), Message: shoal.ErrorMessage(err)}}
			kind, reason = shoal.EventFailed, shoal.ErrorMessage(err)
		} else {
			c.ProvisioningState = shoal.ProvisioningSucceeded
			c.ProvisioningErrors = []shoal.ProvisioningError{}
		}
		if err := tx.UpdateCompute(c); err != nil {
			return err
		}
		return AppendComputeEvent(ctx, tx, c, kind, reason)
	case shoal.ProvisioningDeleting:
		if c.IsInstance() {
			return nil // the instance lifecycle removes it, with its home
		}
		nodes, err := tx.ListNodes(shoal.NodeFilter{Workspace: c.Workspace, Compute: c.Name})
		if err != nil {
			return err
		}
		if err := s.FailQueuedJobs(ctx, tx, c, out); err != nil {
			return err
		}
		if len(nodes) > 0 {
			return nil // the autoscaler releases them; running jobs finish first
		}
		if err := DeleteSystemIdentity(tx, c); err != nil {
			return err
		}
		if err := tx.DeleteCompute(c.Workspace, c.Name); err != nil {
			return err
		}
		return AppendComputeEvent(ctx, tx, c, shoal.EventDeleted, "deleted: no nodes left; quota released")
	}
	return nil
}

// checkPlacement re-checks that the compute's location and size still exist
// in the catalog: the server config may have changed since it was created.
func (s *Services) checkPlacement(c *shoal.Compute) error {
	loc, err := s.catalog.Location(c.Location)
	if err != nil {
		return fmt.Errorf("location: %w", err)
	}
	_, err = s.catalog.CheckSize(c.Size, c.Type, loc)
	return err
}

// FailQueuedJobs fails the jobs still queued on a compute being deleted:
// they can never run.
func (s *Services) FailQueuedJobs(ctx context.Context, tx shoal.Tx, c *shoal.Compute, out *JobOutcomes) error {
	jobs, err := tx.ListJobs(shoal.JobFilter{Workspace: c.Workspace, Compute: c.Name, Statuses: []string{shoal.JobQueued}})
	if err != nil {
		return err
	}
	for _, j := range jobs {
		before := markOf(j)
		now := tx.Now()
		j.Status, j.EndTime = shoal.JobFailed, &now
		j.Error = fmt.Sprintf("compute %s was deleted before the job could run", c.Name)
		j.StatusReason = "failed: " + j.Error
		j.Version++
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		if err := AppendJobEvent(ctx, tx, j, "failed", j.Error); err != nil {
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
	name := systemIdentityName(c.Workspace, c.Name)
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
