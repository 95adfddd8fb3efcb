package computes

import (
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// checkInstanceIsolation refuses an instance its location cannot run as
// asked, naming the field: a location that requires containers but names
// no instance image or whose hosts all report no usable runtime, and root
// access where the instance would run as host processes (its hosts have
// no runtime), where root would be the host's.
func checkInstanceIsolation(tx store.Tx, loc *catalog.Location, spec *compute.ComputeSpec) error {
	if loc.ContainerMode() == catalog.ContainersRequired && loc.InstanceImage == "" {
		return core.FieldErrorf("location", "location %q runs everything in containers (containers: required) but names no instance_image for compute instances; an administrator sets one in the server config", loc.Name)
	}
	if compute.InstanceIsolationAt(loc) != compute.IsolationContainer {
		return nil
	}
	why, err := node.WhyNoRuntime(tx, loc.Name)
	if err != nil || why == "" {
		return err
	}
	if loc.ContainerMode() == catalog.ContainersRequired {
		return core.FieldErrorf("location", "location %q runs compute instances in containers (containers: required), and no host of it has a usable container runtime: %s", loc.Name, why)
	}
	if spec.Image != "" {
		return core.FieldErrorf("image", "the hosts of location %q have no usable container runtime (%s), so the instance would run as processes on the host and not in the image %q; leave image out, or install podman or Docker on the hosts", loc.Name, why, spec.Image)
	}
	if n := node.SubnetNetwork("", spec); n != nil {
		return core.FieldErrorf("network_settings.vnet_name", "the hosts of location %q have no usable container runtime (%s), and virtual network %q, subnet %q is a container network: the instance would run on the host's network, outside it; leave network_settings out, or install podman or Docker on the hosts", loc.Name, why, n.VNet, n.Subnet)
	}
	if spec.EnableRootAccess != nil && *spec.EnableRootAccess {
		return core.FieldErrorf("enable_root_access", "the hosts of location %q have no usable container runtime (%s), so the instance would run as processes on the host, where root is the host's; set enable_root_access: false, or install podman or Docker on the hosts", loc.Name, why)
	}
	return nil
}

// isolationOf is how an instance runs: as its node runs it once it has
// one, else as its location would run it.
func isolationOf(loc *catalog.Location, main *node.Node) string {
	want := compute.InstanceIsolationAt(loc)
	if want == compute.IsolationContainer && main != nil && main.Runtime != nil && !main.Runtime.Usable() {
		return compute.IsolationHostProcesses
	}
	return want
}
