package computes

import (
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// withStatus returns a copy of c with its identifiers and computed status
// filled in. Status is derived from the nodes on every read so that it is
// never stale.
func (s *Service) withStatus(tx store.Tx, c *compute.Compute) (*compute.Compute, error) {
	out := *c
	out.ID = compute.ComputeResourceID(c.Workspace, c.Name)
	out.ResourceID = out.ID
	if c.Type == compute.ComputeTypeKubernetes {
		// `az ml compute show` prints an attached compute's resource_id
		// as the cluster's, and create -f reads it back as that.
		out.ResourceID = c.ComputeSpec.ResourceID
	}
	out.ETag = compute.ETag(c.Version)
	if out.ProvisioningErrors == nil {
		out.ProvisioningErrors = []compute.ProvisioningError{}
	}
	// A cluster's counts come from the store's columns (no node document
	// read: the compute list took 12-16 s at p99 with 10,000 nodes when
	// it decoded them all); an instance's status needs its node whole.
	var nodes []*node.Node
	var groups []node.StateCount
	if c.IsInstance() {
		var err error
		if nodes, err = tx.ListNodes(node.NodeFilter{Workspace: c.Workspace, Compute: c.Name}); err != nil {
			return nil, err
		}
		for _, n := range nodes {
			groups = append(groups, node.StateCountOf(n))
		}
	} else {
		var err error
		if groups, err = tx.CountNodesByState(c.Workspace, c.Name); err != nil {
			return nil, err
		}
	}
	counts, current, target := tallyNodes(groups)
	out.NodeStateCounts = counts
	out.CurrentNodeCount = current
	out.TargetNodeCount = target
	out.AllocationState = compute.AllocationSteady
	if out.CurrentNodeCount != target || counts.PreparingNodeCount > 0 {
		out.AllocationState = compute.AllocationResizing
	}
	if out.IsInstance() {
		s.instanceStatus(tx, &out, nodes)
	}
	s.withScaleWindow(&out)
	return &out, nil
}

// tallyNodes turns a compute's node groups into its status: the counts by
// state as Azure shows them, every node counted (current), and the nodes
// the compute is heading for (target: preparing, idle or running, not
// draining).
func tallyNodes(groups []node.StateCount) (counts compute.NodeStateCounts, current, target int) {
	for _, g := range groups {
		switch {
		case g.State == node.NodeIdle && g.Pulling:
			// Pulling its cluster's prepull_images: Azure counts a node
			// that sets up before it takes work as preparing.
			counts.PreparingNodeCount += g.Count
		case g.State == node.NodeIdle:
			counts.IdleNodeCount += g.Count
		case g.State == node.NodeRunning:
			counts.RunningNodeCount += g.Count
		case g.State == node.NodePreparing:
			counts.PreparingNodeCount += g.Count
		case g.State == node.NodeUnusable:
			counts.UnusableNodeCount += g.Count
		case g.State == node.NodeLeaving:
			counts.LeavingNodeCount += g.Count
		case g.State == node.NodePreempted:
			counts.PreemptedNodeCount += g.Count
		}
		current += g.Count
		if !g.Draining && (g.State == node.NodeIdle || g.State == node.NodeRunning || g.State == node.NodePreparing) {
			target += g.Count
		}
	}
	return counts, current, target
}
