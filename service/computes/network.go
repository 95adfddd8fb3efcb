package computes

import (
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// checkNetwork refuses a virtual network Shoal cannot honour, naming the
// field, rather than store it and place the compute outside it. A
// subnet is a container network on a host: it holds where all of a
// location's nodes share one host (the local provider) and run
// containers; an instance joins it only as a container (one that runs as
// host processes is on the host's network).
func checkNetwork(loc *catalog.Location, spec *compute.ComputeSpec) error {
	if node.SubnetNetwork("", spec) == nil {
		return nil
	}
	if loc.ContainerMode() == catalog.ContainersOff {
		return core.FieldErrorf("network_settings.vnet_name", "location %q runs no containers (containers: off), and a subnet is a container network: its jobs could not be kept in it", loc.Name)
	}
	if spec.Type == compute.ComputeTypeInstance && compute.InstanceIsolationAt(loc) != compute.IsolationContainer {
		return core.FieldErrorf("network_settings.vnet_name", "location %q runs compute instances as processes on the host (its config names no instance_image), on the host's network, and a subnet is a container network: the instance would be outside it; use a location whose instances are containers", loc.Name)
	}
	switch loc.Provider {
	case "local", "fake":
		return nil
	}
	return core.FieldErrorf("network_settings.vnet_name", "location %q (provider %s) spreads nodes over several hosts, and a subnet is a container network on one host: its nodes could not reach each other inside it; use a location of the local provider", loc.Name, loc.Provider)
}
