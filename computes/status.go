package computes

import (
	"github.com/shoal-ml/shoal"
)

// withStatus returns a copy of c with its identifiers and computed status
// filled in. Status is derived from the nodes on every read so that it is
// never stale.
func (s *Service) withStatus(tx shoal.Tx, c *shoal.Compute) (*shoal.Compute, error) {
	out := *c
	out.ID = shoal.ComputeResourceID(c.Workspace, c.Name)
	out.ResourceID = out.ID
	if c.Type == shoal.ComputeTypeKubernetes {
		// `az ml compute show` prints an attached compute's resource_id
		// as the cluster's, and create -f reads it back as that.
		out.ResourceID = c.ComputeSpec.ResourceID
	}
	out.ETag = shoal.ETag(c.Version)
	if out.ProvisioningErrors == nil {
		out.ProvisioningErrors = []shoal.ProvisioningError{}
	}
	nodes, err := tx.ListNodes(shoal.NodeFilter{Workspace: c.Workspace, Compute: c.Name})
	if err != nil {
		return nil, err
	}
	var counts shoal.NodeStateCounts
	target := 0
	for _, n := range nodes {
		switch {
		case n.State == shoal.NodeIdle && len(n.PullingImages) > 0:
			// Pulling its cluster's prepull_images: Azure counts a node
			// that sets up before it takes work as preparing.
			counts.PreparingNodeCount++
		case n.State == shoal.NodeIdle:
			counts.IdleNodeCount++
		case n.State == shoal.NodeRunning:
			counts.RunningNodeCount++
		case n.State == shoal.NodePreparing:
			counts.PreparingNodeCount++
		case n.State == shoal.NodeUnusable:
			counts.UnusableNodeCount++
		case n.State == shoal.NodeLeaving:
			counts.LeavingNodeCount++
		case n.State == shoal.NodePreempted:
			counts.PreemptedNodeCount++
		}
		if !n.Draining && (n.State == shoal.NodeIdle || n.State == shoal.NodeRunning || n.State == shoal.NodePreparing) {
			target++
		}
	}
	out.NodeStateCounts = counts
	out.CurrentNodeCount = len(nodes)
	out.TargetNodeCount = target
	out.AllocationState = shoal.AllocationSteady
	if out.CurrentNodeCount != target || counts.PreparingNodeCount > 0 {
		out.AllocationState = shoal.AllocationResizing
	}
	if out.IsInstance() {
		s.instanceStatus(tx, &out, nodes)
	}
	return &out, nil
}
