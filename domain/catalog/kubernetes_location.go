package catalog

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// DefaultInstanceTypeName is the instance type Azure gives a Kubernetes
// compute whose cluster defines none, and the one a location's
// default_instance_type falls back to.
const DefaultInstanceTypeName = "defaultinstancetype"

// InstanceTypeFamily is the quota family of every Kubernetes instance
// type: their vCPUs count against the location's dedicated quota (the
// default family limit and the total), like any size's.
const InstanceTypeFamily = "kubernetesInstanceTypeFamily"

// KubernetesLocation is what a location backed by provider: kubernetes
// tells the catalog: the cluster's resource ID (what an attached
// compute's resource_id names), its namespace, and its instance types.
type KubernetesLocation struct {
	// ResourceID is the ARM ID of the cluster the location reaches (an
	// AKS managedClusters or Arc connectedClusters ID), optional: an
	// attached compute's resource_id names the location by it or by the
	// location's name.
	ResourceID string `json:"resource_id,omitempty"`
	// Namespace holds the location's pods; an attached compute's
	// namespace must be it.
	Namespace string `json:"namespace"`
	// DefaultInstanceType is what a compute naming none, and a job on it
	// naming none, runs on.
	DefaultInstanceType string `json:"default_instance_type"`
	// InstanceTypes are Azure's InstanceType custom resources, in config
	// order; DefaultInstanceTypeName is always among them.
	InstanceTypes []*InstanceType `json:"instance_types"`
}

// InstanceType is Azure's InstanceType custom resource: where a node's
// pod goes (a nodeSelector and tolerations) and what it asks for.
type InstanceType struct {
	Name         string                 `json:"name"`
	NodeSelector map[string]string      `json:"node_selector,omitempty"`
	Tolerations  []KubernetesToleration `json:"tolerations,omitempty"`
	Resources    InstanceTypeResources  `json:"resources"`
}

// InstanceTypeResources are a pod's requests and limits, Kubernetes'
// quantities as written ("500m", "4Gi"), keyed cpu, memory and
// nvidia.com/gpu.
type InstanceTypeResources struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

// KubernetesToleration is a pod toleration.
type KubernetesToleration struct {
	Key               string `json:"key,omitempty"`
	Operator          string `json:"operator,omitempty"`
	Value             string `json:"value,omitempty"`
	Effect            string `json:"effect,omitempty"`
	TolerationSeconds *int64 `json:"toleration_seconds,omitempty"`
}

// Resource names an instance type may ask for.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
	ResourceGPU    = "nvidia.com/gpu"
)

// DefaultInstanceType is Azure's defaultinstancetype: 0.1 CPU and 2 GiB
// requested, 1 CPU and 2 GiB at most, no GPU.
func DefaultInstanceType() *InstanceType {
	return &InstanceType{Name: DefaultInstanceTypeName, Resources: InstanceTypeResources{
		Requests: map[string]string{ResourceCPU: "100m", ResourceMemory: "2Gi"},
		Limits:   map[string]string{ResourceCPU: "1", ResourceMemory: "2Gi"},
	}}
}

// InstanceType returns the instance type of that name, case-insensitively.
func (k *KubernetesLocation) InstanceType(name string) (*InstanceType, bool) {
	if k == nil {
		return nil, false
	}
	for _, t := range k.InstanceTypes {
		if strings.EqualFold(t.Name, strings.TrimSpace(name)) {
			return t, true
		}
	}
	return nil, false
}

// InstanceTypeSizeName is the catalog name of location loc's instance
// type it: "<it>@<loc>", since every kubernetes location has its own
// defaultinstancetype and sizes are named across the catalog.
func InstanceTypeSizeName(loc, it string) string { return it + "@" + loc }

// InstanceTypeOfSize returns the instance type whose catalog size is
// size (a node's Size), nil when none is.
func (k *KubernetesLocation) InstanceTypeOfSize(size string) *InstanceType {
	name, _, ok := strings.Cut(size, "@")
	if !ok || k == nil {
		return nil
	}
	it, _ := k.InstanceType(name)
	return it
}

// InstanceTypeNames lists the instance types' names, sorted.
func (k *KubernetesLocation) InstanceTypeNames() []string {
	var out []string
	for _, t := range k.InstanceTypes {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// Check validates the instance type: a DNS-label name, known resources
// with parsable quantities, limits at least the requests, whole GPUs.
// field prefixes the errors' field names.
func (t *InstanceType) Check(field string) error {
	if !instanceTypeNameRE.MatchString(t.Name) {
		return core.FieldErrorf(field, "instance type name %q must be 1 to 63 lower-case letters, digits or '-', starting and ending with a letter or digit (a Kubernetes name)", t.Name)
	}
	for _, part := range []struct {
		name string
		m    map[string]string
	}{{"requests", t.Resources.Requests}, {"limits", t.Resources.Limits}} {
		for r, q := range part.m {
			f := field + ".resources." + part.name + "." + r
			switch r {
			case ResourceCPU, ResourceMemory, ResourceGPU:
			default:
				return core.FieldErrorf(f, "unknown resource %q; use cpu, memory or nvidia.com/gpu", r)
			}
			v, err := ParseQuantity(q)
			if err != nil {
				return core.FieldErrorf(f, "%s", err.Error())
			}
			if r == ResourceGPU && v != math.Trunc(v) {
				return core.FieldErrorf(f, "GPUs are whole devices, got %q", q)
			}
		}
	}
	for r, q := range t.Resources.Requests {
		if l, ok := t.Resources.Limits[r]; ok {
			rv, _ := ParseQuantity(q)
			lv, _ := ParseQuantity(l)
			if lv < rv {
				return core.FieldErrorf(field+".resources.limits."+r, "%s is less than the request %s", l, q)
			}
		}
	}
	if t.quantity(ResourceCPU) <= 0 {
		return core.FieldErrorf(field+".resources", "needs a cpu request or limit")
	}
	if t.quantity(ResourceMemory) <= 0 {
		return core.FieldErrorf(field+".resources", "needs a memory request or limit")
	}
	return nil
}

var instanceTypeNameRE = core.LazyRegexp(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// quantity is what the instance type holds of r: its limit, else its
// request (a pod may burst to the limit, so quota counts that).
func (t *InstanceType) quantity(r string) float64 {
	q, ok := t.Resources.Limits[r]
	if !ok {
		q = t.Resources.Requests[r]
	}
	v, _ := ParseQuantity(q)
	return v
}

// Size is the instance type as a size of location loc: vCPUs the CPU
// limit (else request) rounded up, memory in GiB (as sizes count it), GPUs the nvidia.com/gpu
// count. Quota, budgets and the simulator account an instance type's
// nodes by it.
func (t *InstanceType) Size(loc string, pricePerHour float64) *Size {
	gpus := int(t.quantity(ResourceGPU))
	s := &Size{
		Name: InstanceTypeSizeName(loc, t.Name), Family: InstanceTypeFamily,
		VCPUs:    int(math.Max(1, math.Ceil(t.quantity(ResourceCPU)-1e-9))),
		MemoryGB: math.Round(t.quantity(ResourceMemory)/(1<<30)*1000) / 1000,
		GPUs:     gpus, OSVhdSizeMB: 0,
		SupportedComputeTypes: []string{"Kubernetes"},
		PricePerHour:          pricePerHour,
		OnlyAt:                loc,
	}
	if gpus > 0 {
		s.GPUModel = "GPU"
	}
	return s
}

// ParseQuantity reads a Kubernetes quantity ("500m", "2", "4Gi", "1e3",
// "1.5G") as a plain number: CPUs for cpu, bytes for memory.
func ParseQuantity(q string) (float64, error) {
	s := strings.TrimSpace(q)
	if s == "" {
		return 0, fmt.Errorf("is empty; give a quantity such as 500m, 2 or 4Gi")
	}
	mult := 1.0
	for _, suf := range quantitySuffixes {
		if strings.HasSuffix(s, suf.s) {
			s, mult = strings.TrimSuffix(s, suf.s), suf.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a Kubernetes quantity (e.g. 500m, 2, 4Gi)", q)
	}
	return v * mult, nil
}

// quantitySuffixes, the binary ones first so that "Mi" is not read as "M".
var quantitySuffixes = []struct {
	s string
	m float64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50},
	{"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
}

// KubernetesLocationFor resolves an attached compute's resource_id to its
// location: the one whose config declares that resource_id, or whose
// name (or alias) it is. Unknown is EINVALID on resource_id listing the
// kubernetes locations.
func (c *Catalog) KubernetesLocationFor(resourceID string) (*Location, error) {
	id := strings.TrimSpace(resourceID)
	if id == "" {
		return nil, core.FieldErrorf("resource_id", "is required: the kubernetes location to attach (its name, or the resource_id its config declares)")
	}
	var known []string
	for _, l := range c.locations {
		if l.Kubernetes == nil {
			continue
		}
		known = append(known, l.Name)
		if l.Kubernetes.ResourceID != "" && strings.EqualFold(l.Kubernetes.ResourceID, id) {
			return l, nil
		}
	}
	if l, ok := c.byName[strings.ToLower(id)]; ok {
		if l.Kubernetes == nil {
			return nil, core.FieldErrorf("resource_id", "location %q is not a kubernetes location (provider %s); kubernetes locations: %s", l.Name, l.Provider, kubernetesLocationList(known))
		}
		return l, nil
	}
	return nil, core.FieldErrorf("resource_id", "%q names no kubernetes location (by name or by the resource_id its config declares); kubernetes locations: %s", id, kubernetesLocationList(known))
}

func kubernetesLocationList(s []string) string {
	if len(s) == 0 {
		return "none (configure a location with provider: kubernetes)"
	}
	return strings.Join(s, ", ")
}
