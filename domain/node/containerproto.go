package node

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
)

// Container modes of a location: whether its hosts run jobs' ranks in
// containers. Azure runs every job in one; Shoal lets a laptop without a
// runtime run jobs that name no image.
const ()

// ContainerTask is what a node needs to run a task's rank in a
// container, beside the task's Environment.
type ContainerTask struct {
	// Mode is the location's container mode (ContainersOptional, …).
	Mode string `json:"mode"`
	// Registries are the logins for the registries the task's image (or
	// its build's base) comes from, and the workspace registry a built
	// image is pushed to.
	Registries []compute.RegistryCredential `json:"registries,omitempty"`
	// PushTo is the workspace's registry (host[:port]/path) where an
	// image built on the node is pushed, so that other nodes pull it
	// rather than build it again; empty: built images stay on the node.
	PushTo string `json:"push_to,omitempty"`
	// VCPUs and MemoryGB are the node's size: the container's limits.
	VCPUs    int     `json:"vcpus,omitempty"`
	MemoryGB float64 `json:"memory_gb,omitempty"`
	// Network, for a compute in a virtual network, is the container
	// network its subnet maps to; nil: the host's network.
	Network *ContainerNetwork `json:"network,omitempty"`
}

// ContainerNetwork is the container network a (workspace, virtual
// network, subnet) maps to on a host: the containers of the computes in
// that subnet join it and reach each other, nothing else joins it, and an
// internal one (no public IP asked) has no route off the host, as Azure's
// "nodes cannot access the public internet by default".
type ContainerNetwork struct {
	// Name is the engine's network name: "shoal-" and a hash of the
	// workspace, the virtual network and the subnet.
	Name     string `json:"name"`
	Internal bool   `json:"internal,omitempty"`
	// VNet and Subnet are the compute's, for people (labels, errors).
	VNet   string `json:"vnet"`
	Subnet string `json:"subnet"`
}

// SubnetNetwork is the container network of a compute's virtual network
// and subnet in a workspace, nil when it names none. Internal unless the
// compute asks for a public IP (enable_node_public_ip defaults true, as
// in Azure; false is "no public IP").
func SubnetNetwork(workspace string, c *compute.ComputeSpec) *ContainerNetwork {
	n := c.NetworkSettings
	if n == nil || (n.VnetName == "" && n.Subnet == "") {
		return nil
	}
	key := strings.ToLower(workspace) + "/" + strings.ToLower(n.VnetName) + "/" + strings.ToLower(n.Subnet)
	sum := sha256.Sum256([]byte(key))
	return &ContainerNetwork{
		Name:     "shoal-" + hex.EncodeToString(sum[:8]),
		Internal: c.EnableNodePublicIP != nil && !*c.EnableNodePublicIP,
		VNet:     n.VnetName, Subnet: n.Subnet,
	}
}

// RankImageFailed: the rank's image could not be pulled or built (not
// found, unauthorized, no space, a failing build step). The job fails
// with the registry's or the build's words; the node is not lost.
const RankImageFailed job.RankFailure = "image_failed"
