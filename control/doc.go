// Package control holds the server's control loops: node lifecycle
// (leases, loss, releases), placement (the scheduler over the queue),
// scaling (the autoscaler and provisioning, with its backoff), compute
// reconciliation, instances (lifecycle, schedules, idle shutdown),
// simulated preemption, node samples and budgets. The Controller runs
// them in order, each pass at a given now (RunOnce); the leader calls it
// on every change and on a tick, tests and the simulator with a fake
// clock.
//
// The loops reach the request services only through the Services
// interface declared here (implemented by *service.Services) and the
// store; package service never imports this one (deps_link_test.go).
package control
