package nodes

import (
	"context"
	"fmt"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/access"
	"github.com/shoal-ml/shoal/service"
)

// ReconcileComputes moves computes through their provisioning states: a
// Creating compute whose location and size are still valid becomes
// Succeeded (Failed with a provisioning error otherwise), and a Deleting
// compute with no nodes left is removed. It is idempotent and safe to call
// on every tick and after every change.
func (ctl *Loop) ReconcileComputes(ctx context.Context) error {
	s := ctl.s
	ctx = shoal.WithPrincipal(ctx, systemPrincipal)
	var out service.JobOutcomes
	err := s.Store().Update(ctx, func(tx shoal.Tx) error {
		out.Reset()
		computes, err := tx.ListComputes(shoal.ComputeFilter{AllWorkspaces: true})
		if err != nil {
			return err
		}
		for _, c := range computes {
			if err := ctl.reconcileCompute(ctx, tx, c, &out); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.Report(&out)
	}
	return err
}

func (ctl *Loop) reconcileCompute(ctx context.Context, tx shoal.Tx, c *shoal.Compute, out *service.JobOutcomes) error {
	s := ctl.s
	switch c.ProvisioningState {
	case shoal.ProvisioningCreating, shoal.ProvisioningUpdating:
		c.Version++
		c.ModifiedOn = tx.Now()
		kind, reason := shoal.EventProvisioned, "ready: nodes are created on demand"
		if err := ctl.checkPlacement(c); err != nil {
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
		return shoal.AppendComputeEvent(ctx, tx, c, kind, reason)
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
		if err := access.DeleteSystemIdentity(tx, c); err != nil {
			return err
		}
		if err := tx.DeleteCompute(c.Workspace, c.Name); err != nil {
			return err
		}
		return shoal.AppendComputeEvent(ctx, tx, c, shoal.EventDeleted, "deleted: no nodes left; quota released")
	}
	return nil
}

// checkPlacement re-checks that the compute's location and size still exist
// in the catalog: the server config may have changed since it was created.
func (ctl *Loop) checkPlacement(c *shoal.Compute) error {
	s := ctl.s
	loc, err := s.Catalog().Location(c.Location)
	if err != nil {
		return fmt.Errorf("location: %w", err)
	}
	_, err = s.Catalog().CheckSize(c.Size, c.Type, loc)
	return err
}
