package service

import (
	"context"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal/decide/jobrun"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/computes"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// MaxInfraRequeues bounds how often preemption or node loss may requeue one
// job, so a job that kills its nodes cannot loop forever.
const MaxInfraRequeues = jobrun.MaxInfraRequeues

// rankEffects is what applying a rank's report did beyond the rank, its
// attempt and its job.
type rankEffects struct {
	// wake: nodes to wake (siblings to stop when a rank fails, and the
	// node itself when it was handed its next job).
	wake []string
	// started: when the report freed the node and it was handed its next
	// job at once, the attempt and job that started.
	started *scheduling.Started
	// replan: a placement pass may now decide something it could not
	// before: the report freed a node that took no next job, queued the
	// job again, or marked the node preempted. A rank that starts, or
	// ends and hands its node the next job at once, changes neither the
	// free nodes nor the queue's jobs a pass could place: the passes over
	// every queue's heads and every cluster they asked for were work for
	// nothing on the job path. What it may decide concerns the node's
	// compute alone (replanKey): the scheduler places a compute's jobs
	// on its own nodes, a free node still holds its quota, and the quota
	// of a node taken back is free only once the node is released (which
	// asks for the passes of the computes it was shared with).
	replan    bool
	replanKey string
}

// applyRankReport moves a rank, its attempt and its job forward (the
// decision is jobrun.Step's; this writes it and carries out its effects).
func (s *Services) applyRankReport(ctx context.Context, tx store.Tx, j *job.Job, a *job.Attempt, rs *job.RankStatus, n *node.Node, rep *node.RankReport) (rankEffects, error) {
	now := tx.Now()
	out, err := jobrun.Step(j, a, jobrun.Event{Kind: jobrun.RankReport, Rank: rs.Rank, Report: rep}, now)
	if err != nil {
		return rankEffects{}, err
	}
	if !out.Changed {
		return rankEffects{}, nil
	}
	before := j.Status
	*j, *a = out.Job, *out.Attempt
	s.outputs.CompleteWith(tx, before, j, &out)
	if err := afterParallelStep(tx, j, a, rs.Rank); err != nil {
		return rankEffects{}, err
	}
	if rep.Artifacts {
		// The rank uploaded its ./outputs and ./logs before this report:
		// the job lists them among its outputs from now on.
		job.KeepArtifacts(j)
	}
	if err := appendStepEvents(ctx, tx, j, out.Events); err != nil {
		return rankEffects{}, err
	}
	eff := rankEffects{wake: out.Wake, replan: out.Requeued || j.Status == job.JobQueued, replanKey: compute.ComputeKey(n.Workspace, n.Compute)}
	if out.MarkPreempted && n.Role == "" && n.State != node.NodePreempted && n.State != node.NodeLeaving && n.State != node.NodeUnusable {
		// The node's own agent says its machine is being taken back (a
		// Slurm pilot's SIGTERM) before the server heard so: no more
		// work goes there, not even the job being requeued.
		c, err := tx.GetCompute(n.Workspace, n.Compute)
		if err != nil {
			return rankEffects{}, err
		}
		if err := computes.MarkPreempted(ctx, tx, c, n, "taken back by its provider: its agent ended rank "+strconv.Itoa(rs.Rank)+" of job "+j.Name+" as preempted"); err != nil {
			return rankEffects{}, err
		}
		eff.replan = true // a replacement may be due
	}
	if err := saveAttemptAndJob(tx, j, a); err != nil {
		return rankEffects{}, err
	}
	if !out.FreeNode {
		return eff, nil
	}
	// The node is freed in memory and written once: by the hand-on when
	// it gives the node its next job, here when it does not (one round
	// trip a job less than writing it free and then busy).
	freeNode(n, now)
	started, err := s.handOn(ctx, tx, n)
	if err != nil {
		return rankEffects{}, err
	}
	if started == nil {
		if err := tx.UpdateNode(n); err != nil {
			return rankEffects{}, err
		}
		eff.replan = true // a free node, or one leaving
		return eff, nil
	}
	eff.wake, eff.started = append(eff.wake, n.ID), started
	return eff, nil
}

// appendStepEvents records the job events a step asks for.
func appendStepEvents(ctx context.Context, tx store.Tx, j *job.Job, evs []jobrun.JobEvent) error {
	for _, e := range evs {
		if err := AppendJobEvent(ctx, tx, j, string(e.Code), e.Reason); err != nil {
			return err
		}
	}
	return nil
}

// freeNode returns a node to idle once its rank ended (or leaves it
// draining/preempted so the controller releases it), in memory: the
// caller writes it.
func freeNode(n *node.Node, now time.Time) {
	n.CurrentAttemptID, n.CurrentJobName, n.CurrentRank = "", "", 0
	if n.State == node.NodeRunning {
		n.State, n.IdleSince = node.NodeIdle, &now
		if n.Draining {
			n.State = node.NodeLeaving
		}
	}
	n.Version++
}
