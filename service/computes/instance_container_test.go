package computes

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// An instance is a container only where the location's mode allows it,
// it names an instance image and the node's host has a runtime; root
// access follows enable_root_access and the limits its size.
func TestInstanceContainerNeedsModeImageAndRuntime(t *testing.T) {
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local"}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	c := &compute.Compute{ComputeSpec: compute.ComputeSpec{Size: "Standard_DS3_v2", EnableRootAccess: &yes}}
	usable := &node.Node{Runtime: &catalog.ContainerRuntimeInfo{Engine: "podman", Version: "4.3.1"}}
	loc := &catalog.Location{Name: "local", InstanceImage: "shoal/instance:1"}
	ic := InstanceContainer(c, loc, usable, cat)
	if ic == nil || ic.Image != "shoal/instance:1" || !ic.RootAccess || ic.VCPUs != 4 || ic.MemoryGB != 14 {
		t.Fatalf("container %+v, want shoal/instance:1 with root, 4 vCPUs, 14 GB", ic)
	}
	// The instance's own image overrides the location's.
	own := &compute.Compute{ComputeSpec: compute.ComputeSpec{Size: "Standard_DS3_v2", Image: "registry.example/team/ci:2"}}
	if ic := InstanceContainer(own, loc, usable, cat); ic == nil || ic.Image != "registry.example/team/ci:2" {
		t.Errorf("the instance's image: %+v, want registry.example/team/ci:2", ic)
	}
	c.EnableRootAccess = &no
	if ic := InstanceContainer(c, loc, usable, cat); ic == nil || ic.RootAccess {
		t.Errorf("enable_root_access false: %+v", ic)
	}
	for name, tc := range map[string]struct {
		loc *catalog.Location
		n   *node.Node
	}{
		"containers off":   {&catalog.Location{InstanceImage: "x", Containers: catalog.ContainersOff}, usable},
		"no image":         {&catalog.Location{}, usable},
		"no runtime":       {loc, &node.Node{Runtime: &catalog.ContainerRuntimeInfo{Error: "podman is not installed"}}},
		"nothing reported": {loc, &node.Node{}},
	} {
		if ic := InstanceContainer(c, tc.loc, tc.n, cat); ic != nil {
			t.Errorf("%s: %+v, want host processes", name, ic)
		}
	}
}
