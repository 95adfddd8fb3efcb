package service

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal"
)

// MaxInfraRequeues bounds how often preemption or node loss may requeue one
// job, so a job that kills its nodes cannot loop forever.
const MaxInfraRequeues = 20

// rankStatusOf maps an agent's report to a rank status.
var rankStatusOf = map[string]string{
	shoal.RankCompleted: shoal.AttemptCompleted,
	shoal.RankFailed:    shoal.AttemptFailed,
	shoal.RankTimedOut:  shoal.AttemptTimedOut,
	shoal.RankCanceled:  shoal.AttemptCanceled,
	shoal.RankPreempted: shoal.AttemptPreempted,
	shoal.RankLost:      shoal.AttemptLost,
}

// applyRankReport moves a rank, its attempt and its job forward. It returns
// nodes to wake (siblings to stop when a rank fails).
func (s *Services) applyRankReport(ctx context.Context, tx shoal.Tx, j *shoal.Job, a *shoal.Attempt, rs *shoal.RankStatus, n *shoal.Node, rep *shoal.RankReport) ([]string, error) {
	now := tx.Now()
	var wake []string
	freed := false
	switch rep.State {
	case shoal.RankRunning:
		if rs.Status == shoal.AttemptRunning {
			return nil, nil
		}
		rs.Status, rs.StartTime = shoal.AttemptRunning, &now
		if a.Status == shoal.AttemptPreparing {
			a.Status, a.StartTime = shoal.AttemptRunning, &now
		}
		if j.Status == shoal.JobPreparing || j.Status == shoal.JobQueued {
			j.Status = shoal.JobRunning
			j.StatusReason = fmt.Sprintf("running attempt %d on %s", a.Number, rankNodes(a))
			if j.StartTime == nil {
				j.StartTime = &now
			}
			if err := AppendJobEvent(ctx, tx, j, "running", j.StatusReason); err != nil {
				return nil, err
			}
		}
	case shoal.RankFinalizing:
		rs.Reason = "finalizing: uploading outputs"
		if j.Status == shoal.JobRunning && allRanks(a, func(r *shoal.RankStatus) bool { return r == rs || shoal.AttemptTerminal(r.Status) }) {
			j.Status, j.StatusReason = shoal.JobFinalizing, "finalizing: collecting outputs"
		}
	default:
		st, ok := rankStatusOf[rep.State]
		if !ok {
			return nil, shoal.FieldErrorf("state", "unknown rank state %q", rep.State)
		}
		if rs.StartTime == nil && rep.StartTime != nil && !rep.StartTime.After(now) {
			// Its Running report never got through: the node says when
			// it started.
			st := rep.StartTime.UTC()
			rs.StartTime = &st
			if a.StartTime == nil {
				a.StartTime = &st
			}
			if j.StartTime == nil {
				j.StartTime = &st
			}
		}
		end := now
		if rep.EndTime != nil && !rep.EndTime.After(now) && (rs.StartTime == nil || !rep.EndTime.Before(*rs.StartTime)) {
			// Reported late (the server was away): keep when it really ended.
			end = rep.EndTime.UTC()
		}
		rs.Status, rs.EndTime, rs.ExitCode, rs.Reason, rs.Failure = st, &end, rep.ExitCode, rep.Reason, rep.Failure
		if st == shoal.AttemptPreempted && n.Role == "" && n.State != shoal.NodePreempted && n.State != shoal.NodeLeaving && n.State != shoal.NodeUnusable {
			// The node's own agent says its machine is being taken back (a
			// Slurm pilot's SIGTERM) before the server heard so: no more
			// work goes there, not even the job being requeued.
			c, err := tx.GetCompute(n.Workspace, n.Compute)
			if err != nil {
				return nil, err
			}
			if err := markPreempted(ctx, tx, c, n, "taken back by its provider: its agent ended rank "+strconv.Itoa(rs.Rank)+" of job "+j.Name+" as preempted"); err != nil {
				return nil, err
			}
		}
		if err := s.freeNode(tx, n, now); err != nil {
			return nil, err
		}
		freed = true
		if (st == shoal.AttemptFailed || st == shoal.AttemptTimedOut) && !shoal.AttemptTerminal(a.Status) {
			// One rank failed: the gang cannot finish; stop the others.
			a.Status, a.Reason = shoal.AttemptFailed, fmt.Sprintf("rank %d on %s: %s", rs.Rank, n.ID, describeExit(rs))
			wake = append(wake, liveRankNodes(a)...)
		}
		if err := s.finalizeIfEnded(ctx, tx, j, a); err != nil {
			return nil, err
		}
	}
	if err := saveAttemptAndJob(tx, j, a); err != nil {
		return nil, err
	}
	if freed {
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

func describeExit(r *shoal.RankStatus) string {
	switch {
	case r.Status == shoal.AttemptTimedOut:
		return "timed out"
	case r.Status == shoal.AttemptFailed && r.Failure != "":
		// Failed before any process ran (its code refused for safety,
		// an input missing): the agent's reason is the job's, not the
		// -1 it reports as an exit code.
		return r.Reason
	case r.ExitCode != nil:
		return fmt.Sprintf("exit code %d", *r.ExitCode)
	}
	return r.Status
}

func rankNodes(a *shoal.Attempt) string {
	s := ""
	for i, r := range a.Ranks {
		if i > 0 {
			s += ", "
		}
		s += r.NodeID
	}
	return s
}

func allRanks(a *shoal.Attempt, f func(*shoal.RankStatus) bool) bool {
	for _, r := range a.Ranks {
		if !f(r) {
			return false
		}
	}
	return true
}

// finalizeAttempt decides the attempt's outcome once every rank ended, and
// moves the job on: completed, failed, canceled, or queued again.
// Preemption and node loss requeue without spending the retry budget.
func (s *Services) finalizeAttempt(ctx context.Context, tx shoal.Tx, j *shoal.Job, a *shoal.Attempt) error {
	// The attempt ended when its last rank did, which is earlier than now
	// when a node reports a result it kept while the server was away.
	var now time.Time
	for _, r := range a.Ranks {
		if r.EndTime != nil && r.EndTime.After(now) {
			now = *r.EndTime
		}
	}
	if now.IsZero() {
		now = tx.Now()
	}
	a.EndTime = &now
	var infra, failed, canceled *shoal.RankStatus
	for _, r := range a.Ranks {
		switch r.Status {
		case shoal.AttemptPreempted, shoal.AttemptLost:
			if infra == nil {
				infra = r
			}
		case shoal.AttemptFailed, shoal.AttemptTimedOut:
			if failed == nil {
				failed = r
			}
		case shoal.AttemptCanceled:
			if canceled == nil {
				canceled = r
			}
		}
	}
	switch {
	case j.Status == shoal.JobCancelRequested:
		a.Status, a.Reason = shoal.AttemptCanceled, "canceled by request"
		j.Status, j.StatusReason, j.EndTime = shoal.JobCanceled, "canceled", &now
	case infra != nil:
		a.Status = infra.Status
		a.Reason = fmt.Sprintf("node %s %s", infra.NodeID, map[string]string{shoal.AttemptPreempted: "was preempted", shoal.AttemptLost: "was lost (missed its lease)"}[infra.Status])
		if infra.Failure == shoal.RankPrepareFailed {
			a.Reason = fmt.Sprintf("rank %d on node %s could not be prepared (%s)", infra.Rank, infra.NodeID, infra.Reason)
		}
		j.InfraRequeues++
		if j.InfraRequeues > MaxInfraRequeues {
			j.Status, j.EndTime = shoal.JobFailed, &now
			j.Error = fmt.Sprintf("gave up after %d requeues for preemption or node loss", MaxInfraRequeues)
			j.StatusReason = j.Error
		} else {
			j.Status = shoal.JobQueued
			j.StatusReason = fmt.Sprintf("requeued: attempt %d ended because %s; the retry budget is not spent", a.Number, a.Reason)
		}
	case failed != nil:
		a.Status, a.ExitCode = shoal.AttemptFailed, failed.ExitCode
		if failed.Status == shoal.AttemptTimedOut {
			a.Status = shoal.AttemptTimedOut
		}
		a.Reason = fmt.Sprintf("rank %d on %s: %s", failed.Rank, failed.NodeID, describeExit(failed))
		j.FailedAttempts++
		retries := 0
		if j.Retries != nil {
			retries = *j.Retries
		}
		if j.FailedAttempts <= retries {
			j.Status = shoal.JobQueued
			j.StatusReason = fmt.Sprintf("requeued for retry %d of %d: attempt %d failed (%s)", j.FailedAttempts, retries, a.Number, a.Reason)
		} else {
			j.Status, j.EndTime, j.ExitCode = shoal.JobFailed, &now, failed.ExitCode
			j.Error = a.Reason
			if failed.Status == shoal.AttemptTimedOut && j.Limits != nil {
				j.Error = fmt.Sprintf("timed out after limits.timeout %d s (%s)", j.Limits.Timeout, a.Reason)
			}
			j.StatusReason = "failed: " + j.Error
		}
	case canceled != nil:
		// Stopped without a cancel request (e.g. a sibling failed and the
		// failure was already counted): treat as a failure of the attempt.
		a.Status, a.Reason = shoal.AttemptFailed, "stopped"
		j.Status, j.EndTime, j.Error = shoal.JobFailed, &now, "attempt stopped"
	default:
		zero := 0
		a.Status, a.ExitCode = shoal.AttemptCompleted, &zero
		j.Status, j.EndTime, j.ExitCode, j.StatusReason = shoal.JobCompleted, &now, &zero, "completed"
	}
	if j.Status == shoal.JobQueued {
		j.CurrentAttemptID = ""
	}
	kind := map[string]string{shoal.JobQueued: "requeued", shoal.JobCompleted: "completed", shoal.JobFailed: "failed", shoal.JobCanceled: "canceled"}[j.Status]
	return AppendJobEvent(ctx, tx, j, kind, fmt.Sprintf("attempt %d %s: %s", a.Number, a.Status, firstNonEmpty(a.Reason, j.StatusReason)))
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// newID returns prefix + 16 random hex digits.
func newID(r io.Reader, prefix string) string {
	b := make([]byte, 8)
	_, _ = io.ReadFull(r, b)
	return prefix + hex.EncodeToString(b)
}
