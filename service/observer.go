package service

import (
	"time"

	"github.com/shoal-ml/shoal/domain/job"
)

// Observer is told what the services do, after it is committed: the
// server's metrics (package metrics) implement it. Every method must be
// quick and safe for concurrent use.
type Observer interface {
	// JobStarted: a job's first rank ran, after waiting in the queue.
	JobStarted(workspace, compute string, wait time.Duration)
	// JobEnded: a job reached a terminal status.
	JobEnded(workspace, compute, status string)
	// NodeReady: a node joined, provisioning after it was asked for.
	NodeReady(workspace, compute string, provisioning time.Duration)
	// ScaleDecision: the autoscaler decided (scale_up, release, blocked,
	// none) for a reason of a kind (demand, idle, quota, budget, ...).
	ScaleDecision(workspace, compute, action, kind string)
}

// noObserver observes nothing.
type noObserver struct{}

func (noObserver) JobStarted(string, string, time.Duration)     {}
func (noObserver) JobEnded(string, string, string)              {}
func (noObserver) NodeReady(string, string, time.Duration)      {}
func (noObserver) ScaleDecision(string, string, string, string) {}

// SetObserver installs the observer (the server's metrics).
func (s *Services) SetObserver(o Observer) {
	if o == nil {
		o = noObserver{}
	}
	s.observer.Store(&o)
}

// Observe is the observer of job outcomes (SetObserver), never nil.
func (s *Services) Observe() Observer {
	if o := s.observer.Load(); o != nil {
		return *o
	}
	return noObserver{}
}

// jobMark is what the observer has been told of a job, as a transaction
// read it: whether it had started and whether it had ended.
type jobMark struct{ started, ended bool }

func markOf(j *job.Job) jobMark {
	return jobMark{started: j.StartTime != nil, ended: job.JobTerminal(j.Status)}
}

// JobOutcomes gathers, in a transaction, the jobs it started for the first
// time and the jobs it ended, to tell the observer once the transaction is
// committed. Comparing each job's stored state before and after the
// change, rather than watching one report, counts every way a job ends (a
// report, a cancellation in the queue, a lost node, the server ending a
// rank) once, and a job's first start once however often it is retried or
// however quickly it ends. A transaction function may run more than once:
// it calls reset first.
type JobOutcomes struct {
	started []*job.Job
	ended   []*job.Job
	// lost are the nodes the transaction declared lost (workspace,
	// compute), counted by a NodeLostObserver.
	lost [][2]string
}

// NodeLostObserver is an Observer that also counts the nodes declared
// lost (the metrics' shoal_nodes_lost_total), told once the loss is
// committed.
type NodeLostObserver interface {
	NodeLost(workspace, compute string)
}

// Reset empties o, for a transaction that is retried.
func (o *JobOutcomes) Reset() { o.started, o.ended, o.lost = o.started[:0], o.ended[:0], o.lost[:0] }

// note records what the transaction did to j, which was before before it.
func (o *JobOutcomes) note(before jobMark, j *job.Job) {
	after := markOf(j)
	if !before.started && after.started {
		o.started = append(o.started, j)
	}
	if !before.ended && after.ended {
		o.ended = append(o.ended, j)
	}
}

// Report tells the observer of a committed transaction's outcomes.
func (s *Services) Report(o *JobOutcomes) {
	if len(o.started) == 0 && len(o.ended) == 0 && len(o.lost) == 0 {
		return
	}
	obs := s.Observe()
	if nl, ok := obs.(NodeLostObserver); ok {
		for _, l := range o.lost {
			nl.NodeLost(l[0], l[1])
		}
	}
	for _, j := range o.started {
		// A start a node reported late may fall, by the node's clock,
		// before the submission.
		obs.JobStarted(j.Workspace, j.Compute, max(j.StartTime.Sub(j.CreatedOn), 0))
	}
	for _, j := range o.ended {
		obs.JobEnded(j.Workspace, j.Compute, j.Status)
	}
}
