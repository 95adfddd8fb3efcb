package jobrun

import (
	"fmt"
	"reflect"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// MaxInfraRequeues bounds how often preemption or node loss may requeue one
// job, so a job that kills its nodes cannot loop forever.
const MaxInfraRequeues = 20

// Kind names what happened to a job.
type Kind int

const (
	// RankReport is an agent's (or the server's, on the agent's behalf)
	// report on one rank: running, finalizing or ended.
	RankReport Kind = iota + 1
	// NodeLost is a node that missed its lease or vanished: its rank ends
	// as Lost.
	NodeLost
	// Cancel is a user's cancel request.
	Cancel
	// Start is placement giving a queued job its next attempt (the
	// attempt passed to Step, its ranks assigned).
	Start
	// ComputeDeleted is the job's compute being deleted while the job
	// still waits: it can never run.
	ComputeDeleted
)

// Event is what happened: its kind, the rank it concerns, and the report
// (RankReport) or the reason (NodeLost).
type Event struct {
	Kind Kind
	// Rank is the rank the event concerns (RankReport, NodeLost).
	Rank int
	// Report is the rank's report (RankReport).
	Report *node.RankReport
	// Reason says why the node was lost (NodeLost); for Start, a note
	// added to the job's reason (the nodes are a tier fallback's).
	Reason string
}

// Code is a job event's kind as the job's event log records it; a
// decision is taken on the code, never on the sentence beside it.
type Code string

// The codes Step records.
const (
	CodeRunning   Code = "running"
	CodeRequeued  Code = "requeued"
	CodeCompleted Code = "completed"
	CodeFailed    Code = "failed"
	CodeCanceled  Code = "canceled"
	CodeCancel    Code = "cancel"
	CodeScheduled Code = "scheduled"
	// CodeRankLeft: a parallel job's rank other than 0 ended lost or
	// preempted and its attempt goes on with the others (Elastic).
	CodeRankLeft Code = "rank_left"
)

// JobEvent is an entry for the job's event log.
type JobEvent struct {
	Code   Code
	Reason string
}

// Output is the job's and the attempt's new state and what the caller
// must do.
type Output struct {
	// Job and Attempt are the new states (Attempt is nil when Step was
	// given none). Write them when Changed.
	Job     job.Job
	Attempt *job.Attempt
	// Changed says the job or the attempt moved.
	Changed bool
	// FreeNode: the rank's node has no more work from this attempt.
	FreeNode bool
	// MarkPreempted: the rank's own agent said its machine is being taken
	// back; the caller marks the node preempted (if it is not already
	// preempted, leaving or unusable) so no more work goes there.
	MarkPreempted bool
	// Wake lists nodes whose agents should hear at once (their rank must
	// stop).
	Wake []string
	// Ended: every rank ended and the attempt's outcome was decided.
	Ended bool
	// Requeued: the job is queued again for a new attempt; RetrySpent
	// says whether that (or the failure) spent one of its retries.
	Requeued, RetrySpent bool
	// Events to record in the job's event log, in order.
	Events []JobEvent
}

// rankStatusOf maps an agent's report to a rank status.
var rankStatusOf = map[string]string{
	node.RankCompleted: job.AttemptCompleted,
	node.RankFailed:    job.AttemptFailed,
	node.RankTimedOut:  job.AttemptTimedOut,
	node.RankCanceled:  job.AttemptCanceled,
	node.RankPreempted: job.AttemptPreempted,
	node.RankLost:      job.AttemptLost,
}

// Step applies ev to job j and its attempt a (nil for a job without one)
// at time now. The inputs are not modified. It fails only on a report
// whose state it does not know (a field error) or a rank the attempt does
// not have.
func Step(j *job.Job, a *job.Attempt, ev Event, now time.Time) (Output, error) {
	out := Output{Job: *j, Attempt: cloneAttempt(a)}
	switch ev.Kind {
	case Cancel:
		cancel(&out, now)
		return out, nil
	case Start:
		if out.Attempt == nil {
			return out, fmt.Errorf("jobrun: start without an attempt")
		}
		start(&out, ev.Reason)
		return out, nil
	case ComputeDeleted:
		computeDeleted(&out, now)
		return out, nil
	case RankReport, NodeLost:
		if out.Attempt == nil || ev.Rank < 0 || ev.Rank >= len(out.Attempt.Ranks) {
			return out, fmt.Errorf("jobrun: attempt has no rank %d", ev.Rank)
		}
		if ev.Kind == NodeLost {
			nodeLost(&out, ev.Rank, ev.Reason, now)
			return out, nil
		}
		return out, report(&out, ev.Rank, ev.Report, now)
	}
	return out, fmt.Errorf("jobrun: unknown event kind %d", ev.Kind)
}

func cloneAttempt(a *job.Attempt) *job.Attempt {
	if a == nil {
		return nil
	}
	c := *a
	c.Ranks = make([]*job.RankStatus, len(a.Ranks))
	for i, r := range a.Ranks {
		rc := *r
		c.Ranks[i] = &rc
	}
	return &c
}

func (o *Output) emit(code Code, format string, args ...any) {
	o.Events = append(o.Events, JobEvent{Code: code, Reason: fmt.Sprintf(format, args...)})
}

// cancel cancels a queued job at once and asks a running one's ranks to
// stop; it becomes Canceled when they have (finalize).
func cancel(o *Output, now time.Time) {
	j := &o.Job
	if job.JobTerminal(j.Status) || j.Status == job.JobCancelRequested {
		return
	}
	o.Changed = true
	if j.CurrentAttemptID == "" {
		// Ended at once: the event is the end's (canceled), which the
		// notifier reads as job_canceled.
		j.Status, j.StatusReason, j.EndTime = job.JobCanceled, "canceled before it started", &now
		o.emit(CodeCanceled, "%s", j.StatusReason)
		return
	}
	j.Status, j.StatusReason = job.JobCancelRequested, "cancel requested: stopping its processes"
	if o.Attempt != nil {
		for _, r := range o.Attempt.Ranks {
			o.Wake = append(o.Wake, r.NodeID)
		}
	}
	o.emit(CodeCancel, "%s", j.StatusReason)
}

// start makes the attempt the job's current one: the job prepares on its
// ranks' nodes.
func start(o *Output, note string) {
	j, a := &o.Job, o.Attempt
	o.Changed = true
	j.AttemptCount, j.CurrentAttemptID = a.Number, a.ID
	j.Status = job.JobPreparing
	j.StatusReason = fmt.Sprintf("attempt %d preparing on %s", a.Number, rankNodes(a)) + note
	o.emit(CodeScheduled, "%s", j.StatusReason)
}

// computeDeleted fails a job still queued on a compute being deleted.
func computeDeleted(o *Output, now time.Time) {
	j := &o.Job
	if j.Status != job.JobQueued {
		return
	}
	o.Changed = true
	j.Status, j.EndTime = job.JobFailed, &now
	j.Error = fmt.Sprintf("compute %s was deleted before the job could run", j.Compute)
	j.StatusReason = "failed: " + j.Error
	o.emit(CodeFailed, "%s", j.Error)
}

// nodeLost ends a rank as Lost; the attempt ends with it once every rank
// has, and the others are told to stop.
func nodeLost(o *Output, rank int, reason string, now time.Time) {
	j, a := &o.Job, o.Attempt
	rs := a.Ranks[rank]
	if job.AttemptTerminal(rs.Status) || j.CurrentAttemptID != a.ID {
		return
	}
	o.Changed = true
	rs.Status, rs.EndTime, rs.Reason = job.AttemptLost, &now, reason
	if Elastic(j, rank) {
		// The other ranks go on with its mini-batches (the caller gives
		// its leases back): only the rank ends.
		rankLeft(o, rs)
		if allRanks(a, func(r *job.RankStatus) bool { return job.AttemptTerminal(r.Status) }) {
			finalize(o, now)
		}
		return
	}
	if !job.AttemptTerminal(a.Status) {
		a.Status, a.Reason = job.AttemptLost, reason
	}
	for _, r := range a.Ranks {
		if !job.AttemptTerminal(r.Status) {
			o.Wake = append(o.Wake, r.NodeID)
		}
	}
	if allRanks(a, func(r *job.RankStatus) bool { return job.AttemptTerminal(r.Status) }) {
		finalize(o, now)
	}
}

// report applies a rank's report.
func report(o *Output, rank int, rep *node.RankReport, now time.Time) error {
	j, a := &o.Job, o.Attempt
	rs := a.Ranks[rank]
	switch rep.State {
	case node.RankRunning:
		if rep.Services != nil && !reflect.DeepEqual(rs.Services, rep.Services) {
			// The node's services changed (one listens now, one
			// failed): kept on the rank, where the proxy and the job's
			// view read them.
			o.Changed = true
			rs.Services = rep.Services
		}
		if rs.Status == job.AttemptRunning {
			return nil
		}
		o.Changed = true
		rs.Status, rs.StartTime = job.AttemptRunning, &now
		if a.Status == job.AttemptPreparing {
			a.Status, a.StartTime = job.AttemptRunning, &now
		}
		if j.Status == job.JobPreparing || j.Status == job.JobQueued {
			j.Status = job.JobRunning
			j.StatusReason = fmt.Sprintf("running attempt %d on %s", a.Number, rankNodes(a))
			if j.StartTime == nil {
				j.StartTime = &now
			}
			o.emit(CodeRunning, "%s", j.StatusReason)
		}
		return nil
	case node.RankPreparing:
		preparing(o, rank, rep)
		return nil
	case node.RankFinalizing:
		o.Changed = true
		rs.Reason = "finalizing: uploading outputs"
		if j.Status == job.JobRunning && allRanks(a, func(r *job.RankStatus) bool { return r == rs || job.AttemptTerminal(r.Status) }) {
			j.Status, j.StatusReason = job.JobFinalizing, "finalizing: collecting outputs"
		}
		return nil
	}
	st, ok := rankStatusOf[rep.State]
	if !ok {
		return core.FieldErrorf("state", "unknown rank state %q", rep.State)
	}
	if jobsFault(rep.Failure) && st == job.AttemptLost {
		// The image or an input could not be had: the job's fault or
		// its source's, never the node's, whatever state the report says.
		st = job.AttemptFailed
	}
	o.Changed = true
	end := now
	if start, e, ok := nodeTimes(rep, a.CreatedOn, now); ok {
		// The node's clock says how long the processes ran: the rank
		// starts and ends by it, not when the server heard of it (a
		// 0.2 s job whose Running and result arrived 1 ms apart ran
		// 0.2 s), nor when a report kept while the server was away got
		// through.
		end = e
		rs.StartTime = &start
		if a.StartTime == nil || start.Before(*a.StartTime) {
			a.StartTime = &start
		}
		if j.StartTime == nil || start.Before(*j.StartTime) {
			j.StartTime = &start
		}
	} else if rep.EndTime != nil && !rep.EndTime.After(now) && (rs.StartTime == nil || !rep.EndTime.Before(*rs.StartTime)) {
		// Reported late (the server was away): keep when it really ended.
		end = rep.EndTime.UTC()
	}
	rs.Status, rs.EndTime, rs.ExitCode, rs.Reason, rs.Failure = st, &end, rep.ExitCode, rep.Reason, rep.Failure
	o.MarkPreempted = st == job.AttemptPreempted
	o.FreeNode = true
	if (st == job.AttemptLost || st == job.AttemptPreempted) && Elastic(j, rank) {
		rankLeft(o, rs)
	}
	if (st == job.AttemptFailed || st == job.AttemptTimedOut) && !job.AttemptTerminal(a.Status) {
		// One rank failed: the gang cannot finish; stop the others.
		a.Status, a.Reason = job.AttemptFailed, fmt.Sprintf("rank %d on %s: %s", rs.Rank, rs.NodeID, describeExit(rs))
		for _, r := range a.Ranks {
			if !job.AttemptTerminal(r.Status) {
				o.Wake = append(o.Wake, r.NodeID)
			}
		}
	}
	if allRanks(a, func(r *job.RankStatus) bool { return job.AttemptTerminal(r.Status) }) {
		finalize(o, now)
	}
	return nil
}

func describeExit(r *job.RankStatus) string {
	switch {
	case r.Status == job.AttemptTimedOut:
		return "timed out"
	case r.Status == job.AttemptFailed && r.Failure == node.RankImageFailed:
		return "its image could not be had: " + r.Reason
	case r.Status == job.AttemptFailed && r.Failure != "":
		// Failed before any process ran (its code refused for safety, an
		// input missing): the agent's reason is the job's, not the -1 it
		// reports as an exit code.
		return r.Reason
	case r.ExitCode != nil:
		return fmt.Sprintf("exit code %d", *r.ExitCode)
	}
	return r.Status
}

func rankNodes(a *job.Attempt) string {
	s := ""
	for i, r := range a.Ranks {
		if i > 0 {
			s += ", "
		}
		s += r.NodeID
	}
	return s
}

func allRanks(a *job.Attempt, f func(*job.RankStatus) bool) bool {
	for _, r := range a.Ranks {
		if !f(r) {
			return false
		}
	}
	return true
}
