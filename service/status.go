package service

import (
	"fmt"

	"github.com/shoal-ml/shoal"
)

// withStatus returns a copy of c with its identifiers and computed status
// filled in. Status is derived from the nodes on every read so that it is
// never stale.
func (s *Services) withStatus(tx shoal.Tx, c *shoal.Compute) (*shoal.Compute, error) {
	out := *c
	out.ID = ComputeResourceID(c.Workspace, c.Name)
	out.ResourceID = out.ID
	out.ETag = fmt.Sprintf("%q", fmt.Sprint(c.Version))
	if out.ProvisioningErrors == nil {
		out.ProvisioningErrors = []shoal.ProvisioningError{}
	}
	out.AllocationState = shoal.AllocationSteady
	out.CurrentNodeCount = 0
	out.TargetNodeCount = 0
	out.NodeStateCounts = shoal.NodeStateCounts{}
	return &out, nil
}

// Subscription and resource group used in resource IDs; Shoal has neither,
// but Azure tooling parses IDs of this shape.
const (
	Subscription  = "00000000-0000-0000-0000-000000000000"
	ResourceGroup = "shoal"
)

// ComputeResourceID returns the Azure-shaped resource ID of a compute.
func ComputeResourceID(workspace, name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.MachineLearningServices/workspaces/%s/computes/%s",
		Subscription, ResourceGroup, workspace, name)
}
