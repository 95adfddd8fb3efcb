// Package control holds the Controller that orders the server's control
// loops, each in a package of its own with RunOnce(ctx, now):
// control/nodes (leases, loss, releases, compute reconciliation,
// adoption), control/scaling (the autoscaler and provisioning, with its
// backoff), control/instances (the instance lifecycle) and
// control/accounting (node samples, budgets). Placement (the scheduler
// over the queue) and simulated preemption are still here. The leader
// runs a pass on every change and on a tick; tests and the simulator run
// it with a fake clock.
//
// A loop's failure on one item (a pipeline, a sweep, an instance, a
// compute, a node, a placement, a budget) is that item's: every loop
// steps its items through control/loop's Each, which records the
// failure on the item, retries it after a doubling wait and goes on with
// the others; a pass fails only when it cannot list its items. Cancel
// always wins: a parent job asked to cancel is canceled before anything
// of it that can fail is looked at.
//
// The controller passes what ties the loops (the state placement read,
// the blocks scaling found, the node loop's release) rather than sharing
// it. The loops reach the request services only through the interfaces
// they declare (Services here embeds them), implemented by
// *service.Services, and through the store; package service never imports
// these (TestServiceLinksNoControlLoop in deps_link_test.go).
package control
