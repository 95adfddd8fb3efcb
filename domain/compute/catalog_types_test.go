package compute_test

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
)

// TestCatalogKnowsEveryComputeType: the catalog cannot import this
// package, so it spells the compute types itself; a size that lists
// Azure's name of a type supports it under Shoal's name too.
func TestCatalogKnowsEveryComputeType(t *testing.T) {
	for typ, azure := range map[string]string{
		compute.ComputeTypeCluster:    "AmlCompute",
		compute.ComputeTypeInstance:   "ComputeInstance",
		compute.ComputeTypeKubernetes: "Kubernetes",
	} {
		s := &catalog.Size{Name: "x", SupportedComputeTypes: []string{azure}}
		if !s.Supports(typ) {
			t.Errorf("a size supporting %s does not support compute type %q", azure, typ)
		}
	}
}
