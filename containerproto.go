package shoal

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Container modes of a location: whether its hosts run jobs' ranks in
// containers. Azure runs every job in one; Shoal lets a laptop without a
// runtime run jobs that name no image.
const (
	// ContainersOptional (the default): a job with an image runs in a
	// container, one without runs on the host as its run-as user.
	ContainersOptional = "optional"
	// ContainersRequired: every job must name an environment with an
	// image (or a build); a job that names none is refused at submit.
	ContainersRequired = "required"
	// ContainersOff: the location's hosts run nothing in containers; a
	// job with an image is refused at submit.
	ContainersOff = "off"
)

// ContainerRuntimeInfo is what a node's agent found of its host's
// container engine when it started: the server keeps it with the node,
// `shoal location show` shows it per host, and submit refuses image jobs
// on locations whose hosts have none.
type ContainerRuntimeInfo struct {
	// Engine is "podman" or "docker"; empty when the host has no usable
	// engine, and Error then says why.
	Engine  string `json:"engine,omitempty"`
	Version string `json:"version,omitempty"`
	// StorageDriver and StorageRoot are where the engine keeps images;
	// FreeBytes is the space left there.
	StorageDriver string `json:"storage_driver,omitempty"`
	StorageRoot   string `json:"storage_root,omitempty"`
	FreeBytes     int64  `json:"free_bytes,omitempty"`
	// GPUs are the GPU devices containers can be given (CDI names, or
	// /dev/nvidia* paths).
	GPUs []string `json:"gpus,omitempty"`
	// CachedImages and CacheBytes describe the node's image cache.
	CachedImages int   `json:"cached_images,omitempty"`
	CacheBytes   int64 `json:"cache_bytes,omitempty"`
	// Error says why the host has no usable engine (not installed, not
	// reachable), in the engine's words.
	Error string `json:"error,omitempty"`
}

// Usable reports whether the host can run containers.
func (i *ContainerRuntimeInfo) Usable() bool { return i != nil && i.Engine != "" && i.Error == "" }

// RegistryCredential is a registry's login, handed to a node with a task
// only for the pull of that task's image: never stored on the node,
// never logged.
type RegistryCredential struct {
	// Registry is the registry's host[:port], as an image reference
	// names it ("localhost:5000", "myregistry.azurecr.io").
	Registry string `json:"registry"`
	Username string `json:"username"`
	Password string `json:"password"`
	// Insecure: the registry is reached over plain HTTP (listed so by
	// the operator; never assumed).
	Insecure bool `json:"insecure,omitempty"`
}

// String hides the password, so that a credential printed by mistake
// leaks nothing.
func (c RegistryCredential) String() string {
	return "registry " + c.Registry + " as " + c.Username
}

// GoString hides the password from %#v as well.
func (c RegistryCredential) GoString() string { return c.String() }

// ContainerTask is what a node needs to run a task's rank in a
// container, beside the task's Environment.
type ContainerTask struct {
	// Mode is the location's container mode (ContainersOptional, …).
	Mode string `json:"mode"`
	// Registries are the logins for the registries the task's image (or
	// its build's base) comes from, and the workspace registry a built
	// image is pushed to.
	Registries []RegistryCredential `json:"registries,omitempty"`
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
func SubnetNetwork(workspace string, c *ComputeSpec) *ContainerNetwork {
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
const RankImageFailed RankFailure = "image_failed"
