package nodes

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/store"
)

// ReconcileComputes moves computes through their provisioning states: a
// Creating compute whose location and size are still valid becomes
// Succeeded (Failed with a provisioning error otherwise), and a Deleting
// compute with no nodes left is removed. It is idempotent and safe to call
// on every tick and after every change. Each compute that needs
// something is changed in a transaction of its own (loop.Each): one that
// fails (its queued jobs cannot be failed, its identity removed) is
// recorded on it, retried with backoff, and does not hold up the others.
func (ctl *Loop) ReconcileComputes(ctx context.Context) error {
	s := ctl.s
	ctx = identity.WithPrincipal(ctx, systemPrincipal)
	var due []loop.Item[*compute.Compute]
	err := s.Store().View(ctx, func(tx store.Tx) error {
		computes, err := tx.ListComputes(compute.ComputeFilter{AllWorkspaces: true})
		if err != nil {
			return err
		}
		for _, c := range computes {
			if needsReconcile(c) {
				// The state is in the key: a compute that moved on is
				// tried at once.
				due = append(due, loop.Item[*compute.Compute]{Key: compute.ComputeKey(c.Workspace, c.Name) + "#" + c.ProvisioningState, Value: c})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	now := ctl.passNow()
	loop.Each(ctl.computes, now, s.Logger(), "reconciling a compute", due, func(c *compute.Compute) error {
		var out service.JobOutcomes
		err := s.Store().Update(ctx, func(tx store.Tx) error {
			out.Reset()
			// Read again: it may have moved on since.
			cur, err := tx.GetCompute(c.Workspace, c.Name)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			return ctl.reconcileCompute(ctx, tx, cur, &out)
		})
		if err == nil {
			s.Report(&out)
		}
		return err
	}, func(c *compute.Compute, f loop.Failure) {
		err := s.Store().Update(ctx, func(tx store.Tx) error {
			return compute.AppendComputeEvent(ctx, tx, c, "reconcile_failed", f.Reason("reconciling the compute ("+c.ProvisioningState+")"))
		})
		if err != nil {
			s.Logger().Warn("recording a compute's failure failed", slog.String("compute", c.Workspace+"/"+c.Name), slog.Any("err", err))
		}
	})
	return nil
}

// needsReconcile reports whether reconcileCompute has something to do
// for c.
func needsReconcile(c *compute.Compute) bool {
	switch c.ProvisioningState {
	case compute.ProvisioningCreating, compute.ProvisioningUpdating:
		return true
	case compute.ProvisioningDeleting:
		return !c.IsInstance()
	}
	return false
}

func (ctl *Loop) reconcileCompute(ctx context.Context, tx store.Tx, c *compute.Compute, out *service.JobOutcomes) error {
	s := ctl.s
	switch c.ProvisioningState {
	case compute.ProvisioningCreating, compute.ProvisioningUpdating:
		c.Version++
		c.ModifiedOn = tx.Now()
		kind, reason := core.EventProvisioned, "ready: nodes are created on demand"
		if err := ctl.checkPlacement(c); err != nil {
			c.ProvisioningState = compute.ProvisioningFailed
			c.ProvisioningErrors = []compute.ProvisioningError{{Code: core.ErrorCode(err), Message: core.ErrorMessage(err)}}
			kind, reason = core.EventFailed, core.ErrorMessage(err)
		} else {
			c.ProvisioningState = compute.ProvisioningSucceeded
			c.ProvisioningErrors = []compute.ProvisioningError{}
		}
		if err := tx.UpdateCompute(c); err != nil {
			return err
		}
		return compute.AppendComputeEvent(ctx, tx, c, kind, reason)
	case compute.ProvisioningDeleting:
		if c.IsInstance() {
			return nil // the instance lifecycle removes it, with its home
		}
		nodes, err := tx.ListNodes(node.NodeFilter{Workspace: c.Workspace, Compute: c.Name})
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
		return compute.AppendComputeEvent(ctx, tx, c, core.EventDeleted, "deleted: no nodes left; quota released")
	}
	return nil
}

// checkPlacement re-checks that the compute's location and size still exist
// in the catalog: the server config may have changed since it was created.
func (ctl *Loop) checkPlacement(c *compute.Compute) error {
	s := ctl.s
	loc, err := s.Catalog().Location(c.Location)
	if err != nil {
		return fmt.Errorf("location: %w", err)
	}
	_, err = s.Catalog().CheckSize(c.Size, c.Type, loc)
	return err
}
