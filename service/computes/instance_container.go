package computes

import (
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// InstanceContainer is how node n runs instance c as a container, nil
// when it runs as host processes: the location's containers mode is off,
// it names no instance image, or the node's host reported no usable
// runtime. Root access inside follows enable_root_access.
func InstanceContainer(c *compute.Compute, loc *catalog.Location, n *node.Node, cat *catalog.Catalog) *node.InstanceContainer {
	if loc.ContainerMode() == catalog.ContainersOff || loc.InstanceImage == "" || n == nil || !n.Runtime.Usable() {
		return nil
	}
	ic := &node.InstanceContainer{Image: InstanceImage(c, loc),
		RootAccess: c.EnableRootAccess != nil && *c.EnableRootAccess}
	if size, ok := cat.Size(c.Size); ok {
		ic.VCPUs, ic.MemoryGB = size.VCPUs, size.MemoryGB
	}
	return ic
}

// InstanceImage is the image instance c runs in where it is a container:
// its own (the instance's image key) or else its location's
// instance_image.
func InstanceImage(c *compute.Compute, loc *catalog.Location) string {
	if c.Image != "" {
		return c.Image
	}
	return loc.InstanceImage
}
