package compute

import (
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
)

// DefaultKubernetesMaxInstances is max_instances of an attached
// Kubernetes compute that sets none: Azure's has no such bound (the
// cluster's capacity is one), Shoal's autoscaler needs one.
const DefaultKubernetesMaxInstances = 4

// NormalizeKubernetesSpec applies defaults to an attached Kubernetes
// compute and checks it: resource_id names a kubernetes location (which
// becomes its location), namespace is that location's (the default),
// instance_type one of its instance types (default its default; size
// repeats it), identity system- or user-assigned but not both (Azure's
// rule), the scale keys as a cluster's with max_instances defaulting to
// DefaultKubernetesMaxInstances. It returns the location and the size.
func NormalizeKubernetesSpec(spec *ComputeSpec, cat *catalog.Catalog) (*catalog.Location, *catalog.Size, error) {
	if err := ValidateComputeName(spec.Name); err != nil {
		return nil, nil, err
	}
	spec.Type = ComputeTypeKubernetes
	loc, err := cat.KubernetesLocationFor(spec.ResourceID)
	if err != nil {
		return nil, nil, err
	}
	spec.ResourceID = strings.TrimSpace(spec.ResourceID)
	k := loc.Kubernetes
	spec.Namespace = strings.TrimSpace(spec.Namespace)
	switch {
	case spec.Namespace == "":
		spec.Namespace = k.Namespace
	case spec.Namespace != k.Namespace:
		return nil, nil, core.FieldErrorf("namespace", "%q: location %q runs its pods in namespace %q, the one namespace Shoal has rights in; leave namespace out or give %q", spec.Namespace, loc.Name, k.Namespace, k.Namespace)
	}
	if strings.TrimSpace(spec.InstanceType) == "" {
		spec.InstanceType = k.DefaultInstanceType
	}
	it, ok := k.InstanceType(spec.InstanceType)
	if !ok {
		return nil, nil, core.FieldErrorf("instance_type", "unknown instance type %q%s; instance types of location %s: %s", spec.InstanceType, core.DidYouMean(spec.InstanceType, k.InstanceTypeNames()), loc.Name, strings.Join(k.InstanceTypeNames(), ", "))
	}
	spec.InstanceType = it.Name
	size, ok := cat.Size(catalog.InstanceTypeSizeName(loc.Name, it.Name))
	if !ok || !cat.Offers(loc, size) {
		return nil, nil, fmt.Errorf("instance type %q of location %q is not in the catalog", it.Name, loc.Name)
	}
	spec.Size, spec.Location, spec.Tier = size.Name, loc.Name, TierDedicated
	setDefaultInt(&spec.MinInstances, DefaultMinInstances)
	setDefaultInt(&spec.MaxInstances, DefaultKubernetesMaxInstances)
	setDefaultInt(&spec.IdleTimeBeforeScaleDown, DefaultIdleTimeBeforeScaleDown)
	if err := ValidateScaleSettings(*spec.MinInstances, *spec.MaxInstances, *spec.IdleTimeBeforeScaleDown); err != nil {
		return nil, nil, err
	}
	// Keys of an AmlCompute that mean nothing for pods are refused, not
	// ignored.
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"ssh_public_access_enabled", boolOf(spec.SSHPublicAccessEnabled)},
		{"ssh_settings", spec.SSHSettings != nil},
		{"network_settings", spec.NetworkSettings != nil},
		{"prepull_images", len(spec.PrepullImages) > 0},
		{"tier_fallback", spec.TierFallback != nil},
		{"idle_policy", spec.IdlePolicy != ""},
	} {
		if f.set {
			return nil, nil, core.FieldErrorf(f.name, "does not apply to a kubernetes compute")
		}
	}
	if id := spec.Identity; id != nil {
		if t, err := NormalizeIdentityType(id.Type); err == nil && t == IdentitySystemAndUserAssigned {
			return nil, nil, core.FieldErrorf("identity.type", "a kubernetes compute has a system-assigned identity or user-assigned ones, not both (Azure's rule)")
		}
	}
	if err := normalizeIdentity(spec.Identity); err != nil {
		return nil, nil, err
	}
	if err := core.ValidateTags(spec.Tags); err != nil {
		return nil, nil, err
	}
	if err := validateComputeDescription(spec.Description); err != nil {
		return nil, nil, err
	}
	return loc, size, nil
}

// JobInstanceType resolves the instance type a job on kubernetes compute c
// at loc asks for (resources.instance_type; empty: the compute's). A
// compute's nodes are all of its instance type, so another one known at
// the location is refused naming the computes' rule; an unknown one is
// refused with the list.
func JobInstanceType(c *Compute, loc *catalog.Location, want string) (*catalog.InstanceType, error) {
	k := loc.Kubernetes
	want = strings.TrimSpace(want)
	if want == "" {
		want = c.InstanceType
	}
	it, ok := k.InstanceType(want)
	if !ok {
		return nil, core.FieldErrorf("resources.instance_type", "unknown instance type %q%s; instance types of compute %s (location %s): %s", want, core.DidYouMean(want, k.InstanceTypeNames()), c.Name, loc.Name, strings.Join(k.InstanceTypeNames(), ", "))
	}
	if !strings.EqualFold(it.Name, c.InstanceType) {
		return nil, core.FieldErrorf("resources.instance_type", "%q: the nodes of compute %s are of instance type %s; attach the location again as a compute with instance_type: %s (`shoal compute attach --type kubernetes --resource-id %s --instance-type %s`) and submit to it", it.Name, c.Name, c.InstanceType, it.Name, loc.Name, it.Name)
	}
	return it, nil
}
