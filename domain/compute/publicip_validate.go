package compute

import "github.com/shoal-ml/shoal/domain/core"

// validatePublicIP refuses enable_node_public_ip: false without a
// subnet. Azure requires one (the subnet is where a node without a
// public IP gets its only network); on Shoal the subnet's network is
// what keeps such a node off the host's: without one it would reach what
// any node reaches while its owner believes it has no way out.
func validatePublicIP(spec *ComputeSpec) error {
	if spec.EnableNodePublicIP == nil || *spec.EnableNodePublicIP {
		return nil
	}
	if n := spec.NetworkSettings; n != nil && n.Subnet != "" {
		return nil
	}
	return core.FieldErrorf("enable_node_public_ip", "false needs a subnet (network_settings.subnet, with network_settings.vnet_name), as on Azure: "+
		"a compute without a public IP reaches only its subnet; give one, or leave enable_node_public_ip true")
}
