package service

import (
	"context"
	"slices"

	"github.com/shoal-ml/shoal/decide/jobservice"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/service/agentapi"
	"github.com/shoal-ml/shoal/service/jobdata"
	"github.com/shoal-ml/shoal/service/parallel"
	"github.com/shoal-ml/shoal/service/tracking"
	"github.com/shoal-ml/shoal/store"
)

// The job's side of the agent protocol (package agentapi): the task a
// node's rank starts with, and the state changes a node's rank reports
// or the server makes on its behalf, which move the job's state machine.

// AgentTask builds the task of node n's rank of attempt a: what the
// agent protocol (agentapi) hands a node to start, built here because
// the task is the job's (its containers, its tracking token).
func (s *Services) AgentTask(tx store.Tx, j *job.Job, a *job.Attempt, n *node.Node) (*node.AgentTask, error) {
	t := &node.AgentTask{
		RankRef: node.RankRef{AttemptID: a.ID, Rank: n.CurrentRank},
		JobName: j.Name, Workspace: j.Workspace, Attempt: a.Number, NodeCount: len(a.Ranks),
		Command: j.Command, Code: j.Code, Inputs: j.Inputs, EnvironmentVariables: j.EnvironmentVariables,
		Environment:      j.ResolvedEnvironment,
		ProcessesPerNode: 1, MasterAddr: a.MasterAddr, MasterPort: a.MasterPort, KillGrace: s.cfg.KillGrace,
		RestoreOutputs: a.Number > 1, RunAs: j.CreatedByPrincipal,
	}
	for name, o := range j.Outputs {
		if job.IsKeptArtifacts(j.Name, name, o) {
			continue // an earlier attempt's artifacts, not a folder to write
		}
		t.Outputs = append(t.Outputs, name)
	}
	if d := j.Distribution; d != nil {
		t.Distribution = d.Type
		t.ProcessesPerNode = d.ProcessesPerNode(len(a.Ranks))
		if d.Type == job.DistributionTensorFlow {
			t.WorkerCount, t.ParameterServerCount = d.WorkerCount, d.ParameterServerCount
			if len(a.Ranks) > 1 {
				t.Peers = rankPeers(tx, a)
			}
		}
	}
	if j.Limits != nil {
		t.TimeoutSeconds = j.Limits.Timeout
	}
	// The agent cuts the log on the node too (an unreadable setting
	// leaves the default; the server applies the workspace's anyway).
	l, _ := tx.GetWorkspaceLimits(j.Workspace)
	t.MaxLogBytes = l.LogCap()
	if key := s.cfg.SecretsKey; key != nil {
		// Derived, not stored: every sync hands the same token, and any
		// replica with the key checks it (tracking.Authenticate).
		t.Tracking = &node.TrackingTask{Token: tracking.Token(key, a.ID), ExperimentName: tracking.ExperimentOf(j)}
	}
	t.Parallel = parallel.Task(s.cfg.SecretsKey, a.ID, j)
	t.Inputs = parallel.Inputs(j)
	// Remote inputs and outputs for other datastores: an InputFailure
	// (a datastore deleted since submission) is the caller's to fail the
	// rank with, never a node's loss.
	if err := jobdata.Task(tx, s.cfg.SecretsKey, j, t); err != nil {
		return nil, err
	}
	t.Services = jobservice.Tasks(j, t.Rank, s.jobServiceToken(a.ID))
	var err error
	t.Container, err = s.containerTask(tx, j, n)
	return t, err
}

// ReportRank records a state change of one rank reported by its node.
// A report for an attempt that is no longer the job's current one is
// refused with ECONFLICT. When the report frees the node and the node is
// given its next job at once, the answer carries that job's task, so the
// agent starts it without waiting for its next sync.
func (s *Services) ReportRank(ctx context.Context, nodeID, attemptID string, rank int, rep *node.RankReport) ([]*node.AgentTask, error) {
	var eff rankEffects
	var next []*node.AgentTask
	var outcomes JobOutcomes
	err := s.store.Update(ctx, func(tx store.Tx) error {
		outcomes.Reset()
		eff, next = rankEffects{}, nil // a batch may run this again
		w, err := agentapi.LoadRankWork(tx, nodeID, attemptID, rank)
		if err != nil {
			return err
		}
		n, a, rs, j := w.Node, w.Attempt, w.Rank, w.Job
		if j.CurrentAttemptID != a.ID || job.AttemptTerminal(rs.Status) {
			return core.Errorf(core.ECONFLICT, "attempt %s of job %s is no longer current (the job is on attempt %d); report refused", a.ID, j.Name, j.AttemptCount)
		}
		ctx := identity.WithPrincipal(ctx, node.NodePrincipal(n))
		before := markOf(j)
		if rep.Services != nil {
			r := *rep
			r.Services = jobservice.KeepReported(j, rs.Rank, rep.Services)
			rep = &r
		}
		if eff, err = s.applyRankReport(ctx, tx, j, a, rs, n, rep); err != nil {
			return err
		}
		outcomes.note(before, j)
		started := eff.started
		if started == nil {
			return nil
		}
		// handOn gave the node its next job: hand the task over here and
		// leave the node's pending sync asleep. The attempt and job are
		// those it just wrote, not read again.
		na, nj := started.Attempt, started.Job
		t, err := s.AgentTask(tx, nj, na, n)
		if _, ok := agentapi.AsTaskFailure(err); ok {
			// Failed on the node's next sync, which meets it too.
			return nil
		} else if err != nil {
			return err
		}
		if c, err := tx.GetCompute(nj.Workspace, nj.Compute); err == nil {
			t.Identities = access.JobIdentities(tx, c, nj)
		}
		next = append(next, t)
		eff.wake = slices.DeleteFunc(eff.wake, func(id string) bool { return id == n.ID })
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Report(&outcomes)
	s.nodes.Wake(eff.wake...)
	if eff.replan {
		s.changed(eff.replanKey)
	}
	return next, nil
}

// EndRankForNode ends a rank of a node on the server's own account, as if
// the agent had reported state: a rank stopped before its agent started
// it, or one that died with its agent. It does nothing unless the rank is
// still in status from (the agent got to it after all, or it ended
// meanwhile).
func (s *Services) EndRankForNode(ctx context.Context, nodeID string, ref node.RankRef, from, state, reason string) error {
	return s.endRankForNode(ctx, nodeID, ref, from, &node.RankReport{State: state, Reason: reason})
}

// FailRankForNode ends a rank Failed with failure on the server's own
// account: a rank whose task could not be built for the job's own fault
// (agentapi.TaskFailure). It does nothing unless the rank is still in
// status from.
func (s *Services) FailRankForNode(ctx context.Context, nodeID string, ref node.RankRef, from string, failure job.RankFailure, reason string) error {
	return s.endRankForNode(ctx, nodeID, ref, from, &node.RankReport{State: node.RankFailed, Reason: reason, Failure: failure})
}

// endRankForNode applies rep to a rank still in status from.
func (s *Services) endRankForNode(ctx context.Context, nodeID string, ref node.RankRef, from string, rep *node.RankReport) error {
	var wake []string
	var outcomes JobOutcomes
	err := s.store.Update(ctx, func(tx store.Tx) error {
		outcomes.Reset()
		wake = nil
		w, err := agentapi.LoadRankWork(tx, nodeID, ref.AttemptID, ref.Rank)
		if err != nil {
			return err
		}
		n, a, rs, j := w.Node, w.Attempt, w.Rank, w.Job
		if j.CurrentAttemptID != a.ID || rs.Status != from {
			return nil
		}
		ctx := identity.WithPrincipal(ctx, systemPrincipal)
		before := markOf(j)
		if rep.Services != nil {
			r := *rep
			r.Services = jobservice.KeepReported(j, rs.Rank, rep.Services)
			rep = &r
		}
		eff, err := s.applyRankReport(ctx, tx, j, a, rs, n, rep)
		if err != nil {
			return err
		}
		wake = eff.wake
		outcomes.note(before, j)
		return nil
	})
	if err != nil {
		return err
	}
	s.Report(&outcomes)
	s.nodes.Wake(wake...)
	s.notify()
	return nil
}

// ParkedSync is an agent's sync waiting for news (agentapi.ParkedSync),
// named here so that the API, which parks its connection, keeps calling
// the services alone.
type ParkedSync = agentapi.ParkedSync

// MaxOutputBytes bounds one rank's output archive (agentapi.MaxOutputBytes).
const MaxOutputBytes = agentapi.MaxOutputBytes
