package service

import (
	"context"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/computes"
	"github.com/shoal-ml/shoal/jobrun"
)

// MaxInfraRequeues bounds how often preemption or node loss may requeue one
// job, so a job that kills its nodes cannot loop forever.
const MaxInfraRequeues = jobrun.MaxInfraRequeues

// applyRankReport moves a rank, its attempt and its job forward (the
// decision is jobrun.Step's; this writes it and carries out its effects).
// It returns nodes to wake (siblings to stop when a rank fails).
func (s *Services) applyRankReport(ctx context.Context, tx shoal.Tx, j *shoal.Job, a *shoal.Attempt, rs *shoal.RankStatus, n *shoal.Node, rep *shoal.RankReport) ([]string, error) {
	now := tx.Now()
	out, err := jobrun.Step(j, a, jobrun.Event{Kind: jobrun.RankReport, Rank: rs.Rank, Report: rep}, now)
	if err != nil {
		return nil, err
	}
	if !out.Changed {
		return nil, nil
	}
	*j, *a = out.Job, *out.Attempt
	if err := appendStepEvents(ctx, tx, j, out.Events); err != nil {
		return nil, err
	}
	if out.MarkPreempted && n.Role == "" && n.State != shoal.NodePreempted && n.State != shoal.NodeLeaving && n.State != shoal.NodeUnusable {
		// The node's own agent says its machine is being taken back (a
		// Slurm pilot's SIGTERM) before the server heard so: no more
		// work goes there, not even the job being requeued.
		c, err := tx.GetCompute(n.Workspace, n.Compute)
		if err != nil {
			return nil, err
		}
		if err := computes.MarkPreempted(ctx, tx, c, n, "taken back by its provider: its agent ended rank "+strconv.Itoa(rs.Rank)+" of job "+j.Name+" as preempted"); err != nil {
			return nil, err
		}
	}
	if out.FreeNode {
		if err := s.freeNode(tx, n, now); err != nil {
			return nil, err
		}
	}
	wake := out.Wake
	if err := saveAttemptAndJob(tx, j, a); err != nil {
		return nil, err
	}
	if out.FreeNode {
		placed, err := s.handOn(ctx, tx, n)
		if err != nil {
			return nil, err
		}
		if placed {
			wake = append(wake, n.ID)
		}
	}
	return wake, nil
}

// appendStepEvents records the job events a step asks for.
func appendStepEvents(ctx context.Context, tx shoal.Tx, j *shoal.Job, evs []jobrun.JobEvent) error {
	for _, e := range evs {
		if err := AppendJobEvent(ctx, tx, j, string(e.Code), e.Reason); err != nil {
			return err
		}
	}
	return nil
}

// freeNode returns a node to idle once its rank ended (or leaves it
// draining/preempted so the controller releases it).
func (s *Services) freeNode(tx shoal.Tx, n *shoal.Node, now time.Time) error {
	n.CurrentAttemptID, n.CurrentJobName, n.CurrentRank = "", "", 0
	if n.State == shoal.NodeRunning {
		n.State, n.IdleSince = shoal.NodeIdle, &now
		if n.Draining {
			n.State = shoal.NodeLeaving
		}
	}
	n.Version++
	return tx.UpdateNode(n)
}
