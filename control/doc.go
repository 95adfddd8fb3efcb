// Package control holds the server's control loops and the Controller
// that orders them. Each pass runs at a given now (RunOnce); the leader
// calls it on every change and on a tick, tests and the simulator with a
// fake clock. The loops with packages of their own are control/nodes
// (leases, loss, releases, compute reconciliation, adoption),
// control/instances (the instance lifecycle) and control/accounting (node
// samples, budgets); placement (the scheduler over the queue), scaling
// (the autoscaler and provisioning, with its backoff) and simulated
// preemption are still here, tied by the state placement hands scaling
// and the blocks scaling hands placement.
//
// The loops reach the request services only through the interfaces they
// declare (Services here embeds the sub-packages' own), implemented by
// *service.Services, and through the store; package service never imports
// this one (TestServiceLinksNoControlLoop in deps_link_test.go).
package control
