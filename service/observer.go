package service

import "time"

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

func (s *Services) observe() Observer {
	if o := s.observer.Load(); o != nil {
		return *o
	}
	return noObserver{}
}
