package jobrun

import (
	"testing"

	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// TestRankOrder covers every order a sync can give about a node's rank.
func TestRankOrder(t *testing.T) {
	view := func(node, job, attempt, rank string, mod func(*SyncView)) SyncView {
		v := SyncView{
			NodeState: node,
			Job:       &jobkind.Job{Status: job},
			Attempt:   &jobkind.Attempt{Status: attempt, Ranks: []*jobkind.RankStatus{{Status: rank}}},
			Fresh:     true,
		}
		if mod != nil {
			mod(&v)
		}
		return v
	}
	running := func(v *SyncView) { v.Running = true }
	stale := func(v *SyncView) { v.Fresh = false }
	first := func(v *SyncView) { v.FirstSync = true }
	pending := func(v *SyncView) { v.Pending = true }
	busy, prep := jobkind.AttemptRunning, jobkind.AttemptPreparing
	cases := []struct {
		name   string
		v      SyncView
		order  Order
		reason string
	}{
		{"preempted node stops its running rank", view(node.NodePreempted, jobkind.JobRunning, busy, busy, running), Stop, StopPreempted},
		{"cancel stops the running rank", view(node.NodeRunning, jobkind.JobCancelRequested, busy, busy, running), Stop, StopCanceled},
		{"a failed sibling stops the gang", view(node.NodeRunning, jobkind.JobRunning, jobkind.AttemptFailed, busy, running), Stop, StopCanceled},
		{"stale request about an unstarted rank resyncs", view(node.NodeRunning, jobkind.JobCancelRequested, prep, prep, stale), Resync, ""},
		{"fresh request: the server ends the unstarted rank", view(node.NodeRunning, jobkind.JobCancelRequested, prep, prep, nil), EndUnstarted, StopCanceled},
		{"preempted before it started", view(node.NodePreempted, jobkind.JobRunning, prep, prep, nil), EndUnstarted, StopPreempted},
		{"a new agent's stale first sync resyncs", view(node.NodeRunning, jobkind.JobRunning, busy, busy, func(v *SyncView) { first(v); stale(v) }), Resync, ""},
		{"a new agent does not know a running rank: it vanished", view(node.NodeRunning, jobkind.JobRunning, busy, busy, first), Vanished, ""},
		{"an unstarted rank the agent has not got is started", view(node.NodeRunning, jobkind.JobRunning, prep, prep, nil), StartRank, ""},
		{"a rank being prepared is kept", view(node.NodeRunning, jobkind.JobRunning, prep, prep, pending), Keep, ""},
		{"a running rank is kept", view(node.NodeRunning, jobkind.JobRunning, busy, busy, running), Keep, ""},
		{"an unlisted running rank on a known agent is kept (its report comes)", view(node.NodeRunning, jobkind.JobRunning, busy, busy, nil), Keep, ""},
		{"a canceled rank being prepared on a stale poll resyncs", view(node.NodeRunning, jobkind.JobCancelRequested, prep, prep, func(v *SyncView) { pending(v); stale(v) }), Resync, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, r := RankOrder(c.v)
			if o != c.order || r != c.reason {
				t.Errorf("RankOrder = %v %q, want %v %q", o, r, c.order, c.reason)
			}
		})
	}
}
