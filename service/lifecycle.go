package service

import (
	"context"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/agentapi"
	"github.com/shoal-ml/shoal/store"
)

// systemPrincipal is who the node lifecycle, reconciliation and the
// agent protocol's own repairs act as (the scheduler and the autoscaler
// have principals of their own, placement.go and control/scaling/scale.go).
var systemPrincipal = identity.SystemPrincipal("system")

// LoseNode marks a node unusable and ends its rank as Lost, which requeues
// the job once every rank of the attempt has ended (or fails it, past
// MaxInfraRequeues, or cancels it when a cancel was requested): what it
// does to the job goes into outcomes, for the metrics.
func (s *Services) LoseNode(ctx context.Context, tx store.Tx, n *node.Node, reason string, outcomes *JobOutcomes) ([]string, error) {
	var wake []string
	attemptID, rank := n.CurrentAttemptID, n.CurrentRank
	n.State, n.StateReason, n.Draining = node.NodeUnusable, reason, true
	n.CurrentAttemptID, n.CurrentJobName = "", ""
	n.Version++
	if err := tx.UpdateNode(n); err != nil {
		return nil, err
	}
	c := &compute.Compute{Workspace: n.Workspace}
	c.Name = n.Compute
	if err := compute.AppendComputeEvent(ctx, tx, c, core.EventNodeLost, reason); err != nil {
		return nil, err
	}
	if outcomes != nil {
		outcomes.lost = append(outcomes.lost, [2]string{n.Workspace, n.Compute})
	}
	if attemptID == "" {
		return nil, nil
	}
	a, j, err := agentapi.AttemptWithJob(tx, attemptID)
	if err != nil {
		return nil, err
	}
	before := markOf(j)
	out, err := jobrun.Step(j, a, jobrun.Event{Kind: jobrun.NodeLost, Rank: rank, Reason: reason}, tx.Now())
	if err != nil {
		return nil, err
	}
	if !out.Changed {
		return nil, nil
	}
	*j, *a = out.Job, *out.Attempt
	wake = out.Wake
	if err := afterParallelStep(tx, j, a, rank); err != nil {
		return nil, err
	}
	if err := appendStepEvents(ctx, tx, j, out.Events); err != nil {
		return nil, err
	}
	if err := saveAttemptAndJob(tx, j, a); err != nil {
		return nil, err
	}
	outcomes.note(before, j)
	return wake, nil
}
