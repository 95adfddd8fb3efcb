package jobrun

import (
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// finalize decides the attempt's outcome once every rank ended, and moves
// the job on: completed, failed, canceled, or queued again. Preemption and
// node loss requeue without spending the retry budget.
func finalize(o *Output, now time.Time) {
	j, a := &o.Job, o.Attempt
	o.Ended = true
	// The attempt ended when its last rank did, which is earlier than now
	// when a node reports a result it kept while the server was away.
	var end time.Time
	for _, r := range a.Ranks {
		if r.EndTime != nil && r.EndTime.After(end) {
			end = *r.EndTime
		}
	}
	if end.IsZero() {
		end = now
	}
	a.EndTime = &end
	var infra, failed, canceled, image *job.RankStatus
	for _, r := range a.Ranks {
		switch r.Status {
		case job.AttemptPreempted, job.AttemptLost:
			if infra == nil && !Elastic(j, r.Rank) {
				infra = r
			}
		case job.AttemptFailed, job.AttemptTimedOut:
			if jobsFault(r.Failure) && image == nil {
				image = r
			}
			if failed == nil {
				failed = r
			}
		case job.AttemptCanceled:
			if canceled == nil {
				canceled = r
			}
		}
	}
	switch {
	case j.Status == job.JobCancelRequested:
		a.Status, a.Reason = job.AttemptCanceled, "canceled by request"
		j.Status, j.StatusReason, j.EndTime = job.JobCanceled, "canceled", &end
	case image != nil:
		// A missing image, a refused login, a failing build, an input
		// that cannot be had: another attempt would meet the same, and
		// the node is not to blame. The
		// job fails with the registry's or the build's words, spending
		// no retry and counting no infrastructure requeue.
		a.Status, a.ExitCode = job.AttemptFailed, nil
		a.Reason = fmt.Sprintf("rank %d on %s: %s", image.Rank, image.NodeID, describeExit(image))
		j.Status, j.EndTime, j.Error = job.JobFailed, &end, a.Reason
		j.StatusReason = "failed: " + j.Error
	case infra != nil:
		a.Status = infra.Status
		a.Reason = fmt.Sprintf("node %s %s", infra.NodeID, map[string]string{job.AttemptPreempted: "was preempted", job.AttemptLost: "was lost (missed its lease)"}[infra.Status])
		if infra.Failure == node.RankPrepareFailed {
			a.Reason = fmt.Sprintf("rank %d on node %s could not be prepared (%s)", infra.Rank, infra.NodeID, infra.Reason)
		}
		j.InfraRequeues++
		if j.InfraRequeues > MaxInfraRequeues {
			j.Status, j.EndTime = job.JobFailed, &end
			j.Error = fmt.Sprintf("gave up after %d requeues for preemption or node loss", MaxInfraRequeues)
			j.StatusReason = j.Error
		} else {
			j.Status = job.JobQueued
			j.StatusReason = fmt.Sprintf("requeued: attempt %d ended because %s; the retry budget is not spent", a.Number, a.Reason)
		}
	case failed != nil:
		o.RetrySpent = true
		a.Status, a.ExitCode = job.AttemptFailed, failed.ExitCode
		if failed.Status == job.AttemptTimedOut {
			a.Status = job.AttemptTimedOut
		}
		a.Reason = fmt.Sprintf("rank %d on %s: %s", failed.Rank, failed.NodeID, describeExit(failed))
		j.FailedAttempts++
		retries := 0
		if j.Retries != nil {
			retries = *j.Retries
		}
		if j.FailedAttempts <= retries {
			j.Status = job.JobQueued
			j.StatusReason = fmt.Sprintf("requeued for retry %d of %d: attempt %d failed (%s)", j.FailedAttempts, retries, a.Number, a.Reason)
		} else {
			j.Status, j.EndTime, j.ExitCode = job.JobFailed, &end, failed.ExitCode
			j.Error = a.Reason
			if failed.Status == job.AttemptTimedOut && j.Limits != nil {
				j.Error = fmt.Sprintf("timed out after limits.timeout %d s (%s)", j.Limits.Timeout, a.Reason)
			}
			j.StatusReason = "failed: " + j.Error
		}
	case canceled != nil:
		// Stopped without a cancel request (e.g. a sibling failed and the
		// failure was already counted): treat as a failure of the attempt.
		a.Status, a.Reason = job.AttemptFailed, "stopped"
		j.Status, j.EndTime, j.Error = job.JobFailed, &end, "attempt stopped"
	default:
		zero := 0
		a.Status, a.ExitCode = job.AttemptCompleted, &zero
		j.Status, j.EndTime, j.ExitCode, j.StatusReason = job.JobCompleted, &end, &zero, "completed"
	}
	if j.Status == job.JobQueued {
		j.CurrentAttemptID = ""
		o.Requeued = true
	}
	code := map[string]Code{job.JobQueued: CodeRequeued, job.JobCompleted: CodeCompleted, job.JobFailed: CodeFailed, job.JobCanceled: CodeCanceled}[j.Status]
	o.emit(code, "attempt %d %s: %s", a.Number, a.Status, firstNonEmpty(a.Reason, j.StatusReason))
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// jobsFault reports whether a rank's failure is the job's own (its image
// or an input could not be had, or an output's datastore refused it),
// which fails the job at once, spending no retry: another attempt would
// meet the same.
func jobsFault(f job.RankFailure) bool {
	return f == node.RankImageFailed || f == node.RankInputFailed || f == node.RankOutputFailed
}
