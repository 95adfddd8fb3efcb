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
	nodes, err := tx.ListNodes(node.NodeFilter{Workspace: c.Workspace, Compute: c.Name})
	if err != nil {
		return nil, err
	}
	var counts compute.NodeStateCounts
	target := 0
	for _, n := range nodes {
		switch {
		case n.State == node.NodeIdle && len(n.PullingImages) > 0:
			// Pulling its cluster's prepull_images: Azure counts a node
			// that sets up before it takes work as preparing.
			counts.PreparingNodeCount++
		case n.State == node.NodeIdle:
			counts.IdleNodeCount++
		case n.State == node.NodeRunning:
			counts.RunningNodeCount++
		case n.State == node.NodePreparing:
			counts.PreparingNodeCount++
		case n.State == node.NodeUnusable:
			counts.UnusableNodeCount++
		case n.State == node.NodeLeaving:
			counts.LeavingNodeCount++
		case n.State == node.NodePreempted:
			counts.PreemptedNodeCount++
		}
		if !n.Draining && (n.State == node.NodeIdle || n.State == node.NodeRunning || n.State == node.NodePreparing) {
			target++
		}
	}
	out.NodeStateCounts = counts
	out.CurrentNodeCount = len(nodes)
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
