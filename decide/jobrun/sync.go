package jobrun

import (
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// Order is what a node's sync does about the rank assigned to the node.
type Order int

// The orders RankOrder gives.
const (
	// Keep: nothing to say about the rank.
	Keep Order = iota
	// Stop the rank the agent runs (StopReason says why).
	Stop
	// Resync: the long-poll's request is stale; the agent asks again at
	// once and its fresh request decides.
	Resync
	// EndUnstarted: the rank was stopped before its agent started it;
	// nobody will report its end, so the server ends it (StopReason).
	EndUnstarted
	// Vanished: a new agent knows nothing of a running rank, which died
	// with the agent before it; the server ends it as lost.
	Vanished
	// StartRank hands the rank to the agent.
	StartRank
)

// Stop reasons, as the agent's stop order and the rank's end carry them.
const (
	StopPreempted = "preempted"
	StopCanceled  = "canceled"
)

// SyncView is what one sync knows of a node's assigned rank.
type SyncView struct {
	// NodeState is the node's state (a preempted node's rank stops).
	NodeState string
	Job       *job.Job
	Attempt   *job.Attempt
	Rank      int
	// Running and Pending: the agent's request lists the rank as running,
	// or as received and being prepared.
	Running, Pending bool
	// FirstSync: the request is a (re)started agent's first.
	FirstSync bool
	// Fresh: the answer is computed for the request as it arrived, not
	// after a long-poll wait (a request that waited may predate a Start
	// another sync handed out meanwhile).
	Fresh bool
}

// RankOrder decides what a sync tells the node about its rank, and why
// when it stops it. It is pure: the agent protocol reads the view in a
// transaction and carries out the order.
func RankOrder(v SyncView) (Order, string) {
	rank := v.Attempt.Ranks[v.Rank]
	reason := ""
	switch {
	case v.NodeState == node.NodePreempted:
		reason = StopPreempted
	case v.Job.Status == job.JobCancelRequested:
		reason = StopCanceled
	case job.AttemptTerminal(v.Attempt.Status):
		reason = StopCanceled // a sibling rank failed: stop the gang
	}
	switch {
	case reason != "" && v.Running:
		return Stop, reason
	case reason != "" && rank.Status == job.AttemptPreparing && !v.Fresh:
		// The request this long-poll answers was made before now: its
		// list of running ranks may predate a Start another sync handed
		// out since, so it proves nothing.
		return Resync, ""
	case reason != "" && rank.Status == job.AttemptPreparing:
		// (bench/chaos caught the stale case above ending a rank whose
		// process had just started from another sync's answer.)
		return EndUnstarted, reason
	case v.FirstSync && !v.Fresh && !v.Running && !v.Pending && rank.Status == job.AttemptRunning:
		return Resync, ""
	case v.FirstSync && !v.Running && !v.Pending && rank.Status == job.AttemptRunning:
		return Vanished, ""
	case reason == "" && !v.Running && !v.Pending && rank.Status == job.AttemptPreparing:
		return StartRank, ""
	}
	return Keep, ""
}
