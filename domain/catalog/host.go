package catalog

import "context"

// Host states.
const (
	HostReady    = "ready"
	HostUnusable = "unusable"
)

// Host is a machine nodes of a location run on, with its capacity and
// what is in use: the local provider's is this machine; a machine joined
// by hand is one too.
type Host struct {
	Name     string  `json:"name"`
	Address  string  `json:"address"`
	Kind     string  `json:"kind"` // "provider" or "joined by hand"
	VCPUs    int     `json:"vcpus"`
	MemoryGB float64 `json:"memory_gb"`
	GPUs     int     `json:"gpus"`
	// GPUModel names the host's GPUs ("NVIDIA A100-SXM4-80GB").
	GPUModel string `json:"gpu_model,omitempty"`
	// Labels are the operator's notes on the host (rack, owner).
	Labels map[string]string `json:"labels,omitempty"`
	// Nodes counts the nodes on the host; UsedVCPUs their vCPUs.
	Nodes     int    `json:"nodes"`
	UsedVCPUs int    `json:"used_vcpus"`
	State     string `json:"state"`
	// Reason says why a host is unusable.
	Reason string `json:"reason,omitempty"`
	// ContainerRuntime is the host's container engine as its most
	// recently joined node reported it (nil while no node there has
	// reported one); ContainerRuntimeNode names that node.
	ContainerRuntime     *ContainerRuntimeInfo `json:"container_runtime,omitempty"`
	ContainerRuntimeNode string                `json:"container_runtime_node,omitempty"`
}

// HostLister is an optional Provider capability: the machines it runs
// nodes on and their capacity.
type HostLister interface {
	// Hosts returns the provider's machines (capacity only; the server
	// counts the nodes on them).
	Hosts(ctx context.Context) ([]*Host, error)
}

// WorkIsolationReporter is an optional Provider capability: it says as
// whom its nodes' work runs and what that work can therefore read, which
// `shoal location show` prints (work_isolation).
type WorkIsolationReporter interface {
	WorkIsolation() string
}
