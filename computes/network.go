package computes

import "github.com/shoal-ml/shoal"

// checkNetwork refuses a virtual network Shoal cannot honour, naming the
// field, rather than store it and place the compute outside it. A
// cluster's subnet is a container network on a host: it holds where all
// of a location's nodes share one host (the local provider) and run
// containers; an instance's is not built yet.
func checkNetwork(loc *shoal.Location, spec *shoal.ComputeSpec) error {
	if shoal.SubnetNetwork("", spec) == nil {
		return nil
	}
	if spec.Type == shoal.ComputeTypeInstance {
		return shoal.FieldErrorf("network_settings", "a compute instance in a virtual network is not supported yet (an instance runs on the host's network); leave network_settings out")
	}
	if loc.ContainerMode() == shoal.ContainersOff {
		return shoal.FieldErrorf("network_settings.vnet_name", "location %q runs no containers (containers: off), and a subnet is a container network: its jobs could not be kept in it", loc.Name)
	}
	switch loc.Provider {
	case "local", "fake":
		return nil
	}
	return shoal.FieldErrorf("network_settings.vnet_name", "location %q (provider %s) spreads nodes over several hosts, and a subnet is a container network on one host: its nodes could not reach each other inside it; use a location of the local provider", loc.Name, loc.Provider)
}
