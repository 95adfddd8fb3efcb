package node

import "context"

// NodeWatcher is an optional Provider capability of providers whose
// machines another scheduler places (kubernetes): the node loop asks it
// about nodes still preparing, so that a node waiting for capacity says
// why (Kubernetes' "0/3 nodes are available: 3 Insufficient cpu.") and a
// machine taken back before its agent could say so is preempted.
type NodeWatcher interface {
	// NodeStatus says where node's machine stands.
	NodeStatus(ctx context.Context, node *Node) (ProviderNodeStatus, error)
}

// ProviderNodeStatus is a provider's word on one node's machine.
type ProviderNodeStatus struct {
	// Waiting is why the machine has not started yet ("" when it has,
	// or no reason was given): shown as the node's state reason.
	Waiting string
	// Preempted says the machine was taken back (evicted, preempted):
	// the node's work is requeued without spending retries.
	Preempted bool
	// Ended says the machine is gone or ended otherwise (failed).
	Ended bool
	// Reason says why it was preempted or ended.
	Reason string
}
