package catalog

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Location is a named pool of capacity backed by a provider. Users name it
// by Name or by any alias (for example an Azure region such as "westus"), so
// YAML written for Azure runs unchanged.
type Location struct {
	// Name is the canonical name, e.g. "local".
	Name string `json:"name"`
	// Provider is the backend that creates nodes here, e.g. "local".
	Provider string `json:"provider"`
	// Aliases are other names that resolve to this location.
	Aliases []string `json:"aliases,omitempty"`
	// GPUs says whether nodes here can have GPUs.
	GPUs GPUCapability `json:"gpus"`
	// Quota holds the vCPU limits of this location.
	Quota QuotaLimits `json:"quota"`
	// ProvisioningDelay is how long a new node takes to become ready;
	// zero for the local provider unless configured to mimic a cloud.
	ProvisioningDelay time.Duration `json:"-"`
	// Sizes, when not empty, restricts the sizes offered here (canonical names).
	Sizes []string `json:"sizes,omitempty"`
	// PreemptionRatePerHour is how often, on average, a low-priority node is
	// preempted per node-hour; 0 never. It lets users rehearse preemption.
	PreemptionRatePerHour float64 `json:"preemption_rate_per_hour,omitempty"`
	// Containers is whether the location's hosts run jobs' ranks in
	// containers: ContainersRequired, ContainersOptional or ContainersOff;
	// empty means ContainersOptional (see ContainerMode).
	Containers string `json:"containers,omitempty"`
	// InstanceImage is the image compute instances here run in, one
	// container each, on hosts with a container runtime; empty: they run
	// as host processes.
	InstanceImage string `json:"instance_image,omitempty"`
	// AppBindMountsAllowed are host paths (absolute, clean) under which
	// an instance's custom application may bind-mount a source beyond
	// the instance's own home.
	AppBindMountsAllowed []string `json:"app_bind_mounts_allowed,omitempty"`
	// NodeImage, when set, says each node here runs one container image
	// (a kubernetes location's pod): a node provisioned for a queued job
	// runs the job's image, or this one for a job that names none, and
	// takes only jobs of its image or of none.
	NodeImage string `json:"node_image,omitempty"`
	// GangTimeout, when positive, is how long the nodes provisioned for a
	// multi-node job may take to come up together before they are all
	// released (Kueue's waitForPodsReady); GangBackoff is the wait before
	// the gang's nodes are asked for again, doubling with each release
	// up to GangBackoffMax.
	GangTimeout time.Duration `json:"-"`
	GangBackoff time.Duration `json:"-"`
	// Kubernetes is set on a provider: kubernetes location: what an
	// attached (type: kubernetes) compute names and runs on.
	Kubernetes *KubernetesLocation `json:"kubernetes,omitempty"`
}

// GangBackoffMax caps the doubling of a location's GangBackoff.
const GangBackoffMax = 15 * time.Minute

// ContainerMode is the location's container mode, ContainersOptional
// when none was set.
func (l *Location) ContainerMode() string {
	if l == nil || l.Containers == "" {
		return ContainersOptional
	}
	return l.Containers
}

// GPUCapability describes a location's GPUs.
type GPUCapability struct {
	// Available is true when nodes at the location can have GPUs.
	Available bool `json:"available"`
	// Emulated is true when GPUs are declared for testing rather than real:
	// jobs see the size's GPU count but no device.
	Emulated bool `json:"emulated"`
	// Detail says how availability was decided (detected devices, config).
	Detail string `json:"detail,omitempty"`
}

// QuotaLimits are a location's vCPU limits; a negative value means unlimited.
type QuotaLimits struct {
	// DedicatedVCPUsPerFamily overrides DefaultFamilyDedicatedVCPUs per family.
	DedicatedVCPUsPerFamily map[string]int `json:"dedicated_vcpus_per_family,omitempty"`
	// DefaultFamilyDedicatedVCPUs applies to families not listed above.
	DefaultFamilyDedicatedVCPUs int `json:"default_family_dedicated_vcpus"`
	// TotalDedicatedVCPUs caps dedicated vCPUs over all families.
	TotalDedicatedVCPUs int `json:"total_dedicated_vcpus"`
	// LowPriorityVCPUs caps low-priority vCPUs over all families.
	LowPriorityVCPUs int `json:"low_priority_vcpus"`
}

// Built-in quota defaults, applied when a location's config says nothing.
const (
	DefaultFamilyDedicatedVCPUs = 100
	DefaultTotalDedicatedVCPUs  = 200
	DefaultLowPriorityVCPUs     = 100
)

// DefaultQuotaLimits returns the built-in quota.
func DefaultQuotaLimits() QuotaLimits {
	return QuotaLimits{
		DefaultFamilyDedicatedVCPUs: DefaultFamilyDedicatedVCPUs,
		TotalDedicatedVCPUs:         DefaultTotalDedicatedVCPUs,
		LowPriorityVCPUs:            DefaultLowPriorityVCPUs,
	}
}

// FamilyLimit returns the dedicated vCPU limit of family.
func (q QuotaLimits) FamilyLimit(family string) int {
	for f, n := range q.DedicatedVCPUsPerFamily {
		if strings.EqualFold(f, family) {
			return n
		}
	}
	return q.DefaultFamilyDedicatedVCPUs
}

// Size is a VM size: Azure's name and facts, or one a config adds.
type Size struct {
	Name                  string   `json:"name"`
	Family                string   `json:"family"`
	VCPUs                 int      `json:"v_cp_us"`
	GPUs                  int      `json:"gpus"`
	GPUModel              string   `json:"gpu_model,omitempty"`
	MemoryGB              float64  `json:"memory_gb"`
	OSVhdSizeMB           int      `json:"os_vhd_size_mb"`
	MaxResourceVolumeMB   int      `json:"max_resource_volume_mb"`
	LowPriorityCapable    bool     `json:"low_priority_capable"`
	PremiumIO             bool     `json:"premium_io"`
	SupportedComputeTypes []string `json:"supported_compute_types"`
	// PricePerHour is the hourly list price in USD on dedicated capacity.
	PricePerHour float64 `json:"-"`
	// LowPriorityPricePerHour is the hourly list price in USD on low-priority capacity.
	LowPriorityPricePerHour float64 `json:"-"`
	// OnlyAt, when set, is the one location that offers the size: a
	// Kubernetes location's instance types are its own.
	OnlyAt string `json:"only_at,omitempty"`
}

// Supports reports whether the size can back computes of computeType
// ("amlcompute" or "computeinstance").
func (s *Size) Supports(computeType string) bool {
	for _, t := range s.SupportedComputeTypes {
		if strings.EqualFold(t, computeType) || strings.EqualFold(t, azureComputeTypeName(computeType)) {
			return true
		}
	}
	return false
}

// azureComputeTypeNames are Azure's names of Shoal's compute types
// (compute.ComputeType*, which this package cannot import: compute
// depends on the catalog), as a size's supported_compute_types lists
// them; domain/compute's tests hold the two lists together.
var azureComputeTypeNames = map[string]string{
	"amlcompute":      "AmlCompute",
	"computeinstance": "ComputeInstance",
	"kubernetes":      "Kubernetes",
}

// azureComputeTypeName is Azure's name of compute type t, or t.
func azureComputeTypeName(t string) string {
	if n, ok := azureComputeTypeNames[strings.ToLower(t)]; ok {
		return n
	}
	return t
}

// DefaultCPUSize is the size a refusal of a GPU size suggests instead,
// and a cluster's default size (compute.DefaultClusterSize).
const DefaultCPUSize = "Standard_DS3_v2"

// Catalog holds the known locations and sizes. It is built once from the
// built-in defaults and the server config, then only read.
type Catalog struct {
	locations       []*Location
	byName          map[string]*Location
	sizes           []*Size
	sizeByName      map[string]*Size
	defaultLocation string
}

// NewCatalog validates and indexes locations and sizes. defaultLocation is
// where computes go when they name none; it must be one of locations.
func NewCatalog(locations []*Location, sizes []*Size, defaultLocation string) (*Catalog, error) {
	c := &Catalog{byName: map[string]*Location{}, sizeByName: map[string]*Size{}}
	for _, s := range sizes {
		if s.Name == "" || s.VCPUs <= 0 {
			return nil, fmt.Errorf("size %q: a name and a positive vCPU count are required", s.Name)
		}
		key := strings.ToLower(s.Name)
		if _, dup := c.sizeByName[key]; dup {
			// A later definition (from config) replaces a built-in one.
			for i, old := range c.sizes {
				if strings.EqualFold(old.Name, s.Name) {
					c.sizes[i] = s
				}
			}
		} else {
			c.sizes = append(c.sizes, s)
		}
		c.sizeByName[key] = s
	}
	for _, l := range locations {
		for _, n := range append([]string{l.Name}, l.Aliases...) {
			key := strings.ToLower(n)
			if other, dup := c.byName[key]; dup {
				return nil, fmt.Errorf("location name %q is used by both %q and %q", n, other.Name, l.Name)
			}
			c.byName[key] = l
		}
		for _, s := range l.Sizes {
			if _, ok := c.sizeByName[strings.ToLower(s)]; !ok {
				return nil, fmt.Errorf("location %q offers unknown size %q", l.Name, s)
			}
		}
		c.locations = append(c.locations, l)
	}
	d, ok := c.byName[strings.ToLower(defaultLocation)]
	if !ok {
		return nil, fmt.Errorf("default location %q is not defined", defaultLocation)
	}
	c.defaultLocation = d.Name
	return c, nil
}

// DefaultLocation returns the canonical name of the default location.
func (c *Catalog) DefaultLocation() string { return c.defaultLocation }

// Locations returns every location, in configuration order.
func (c *Catalog) Locations() []*Location { return c.locations }

// Location resolves a location name or alias, case-insensitively. An unknown
// name is EINVALID listing the known ones.
func (c *Catalog) Location(name string) (*Location, error) {
	if l, ok := c.byName[strings.ToLower(strings.TrimSpace(name))]; ok {
		return l, nil
	}
	return nil, &core.Error{Code: core.EINVALID, Field: "location", Message: fmt.Sprintf(
		"location: unknown location %q; known locations: %s", name, strings.Join(c.LocationNames(), ", "))}
}

// LocationNames returns the canonical location names with their aliases,
// sorted, for error messages.
func (c *Catalog) LocationNames() []string {
	var names []string
	for _, l := range c.locations {
		n := l.Name
		if len(l.Aliases) > 0 {
			n += " (also " + strings.Join(l.Aliases, ", ") + ")"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Size returns the size of that name, case-insensitively.
func (c *Catalog) Size(name string) (*Size, bool) {
	s, ok := c.sizeByName[strings.ToLower(strings.TrimSpace(name))]
	return s, ok
}

// SizesAt returns the sizes offered at loc, sorted by name.
func (c *Catalog) SizesAt(loc *Location) []*Size {
	var out []*Size
	for _, s := range c.sizes {
		if c.Offers(loc, s) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SizeNamesAt returns the names of the sizes offered at loc.
func (c *Catalog) SizeNamesAt(loc *Location) []string {
	var names []string
	for _, s := range c.SizesAt(loc) {
		names = append(names, s.Name)
	}
	return names
}

// Offers reports whether loc offers size s at all.
func (c *Catalog) Offers(loc *Location, s *Size) bool {
	if s.OnlyAt != "" {
		return strings.EqualFold(s.OnlyAt, loc.Name)
	}
	if len(loc.Sizes) == 0 {
		return true
	}
	for _, n := range loc.Sizes {
		if strings.EqualFold(n, s.Name) {
			return true
		}
	}
	return false
}

// CheckSize returns the size for a compute of computeType at loc, or an
// EINVALID error (field "size") saying why it cannot be used there and what
// to do instead.
func (c *Catalog) CheckSize(name, computeType string, loc *Location) (*Size, error) {
	s, ok := c.Size(name)
	if !ok {
		return nil, core.FieldErrorf("size", "unknown VM size %q%s; run `shoal compute list-sizes --location %s` to see the sizes offered there, or add the size to the server config (sizes:)", name, core.DidYouMean(name, c.SizeNamesAt(loc)), loc.Name)
	}
	if !c.Offers(loc, s) {
		return nil, core.FieldErrorf("size", "%q is not offered at location %q; run `shoal compute list-sizes --location %s`", s.Name, loc.Name, loc.Name)
	}
	if !s.Supports(computeType) {
		return nil, core.FieldErrorf("size", "%q does not support compute type %s (it supports %s)", s.Name, computeType, strings.Join(s.SupportedComputeTypes, ", "))
	}
	if s.GPUs > 0 && !loc.GPUs.Available {
		why := loc.GPUs.Detail
		if why == "" {
			why = "no GPUs are available there"
		}
		return nil, core.FieldErrorf("size", "%q needs %d %s GPU(s) but location %q has none (%s); choose a CPU size such as %s, use a location with GPUs, or for testing declare emulated GPUs for this location in the server config (locations: - name: %s, emulated_gpus: true)",
			s.Name, s.GPUs, s.GPUModel, loc.Name, why, DefaultCPUSize, loc.Name)
	}
	return s, nil
}

// LocationDetail is a location with its quota use and its hosts, as
// `shoal location show` prints it.
type LocationDetail struct {
	*Location
	Usage []Usage `json:"usage"`
	Hosts []*Host `json:"hosts"`
	// Nodes counts the nodes at the location.
	Nodes int `json:"nodes"`
	// WorkIsolation says as whom the location's work runs, when its
	// provider can tell.
	WorkIsolation string `json:"work_isolation,omitempty"`
}

// Usage is one quota line of a location, with the keys `az ml compute
// list-usage` prints.
type Usage struct {
	ID                   string    `json:"id"`
	AmlWorkspaceLocation string    `json:"aml_workspace_location"`
	Type                 string    `json:"type"`
	Unit                 string    `json:"unit"`
	CurrentValue         int       `json:"current_value"`
	Limit                int       `json:"limit"`
	Name                 UsageName `json:"name"`
}

// UsageName names a usage line.
type UsageName struct {
	Value          string `json:"value"`
	LocalizedValue string `json:"localized_value"`
}

const // ContainersOptional (the default): a job with an image runs in a
// container, one without runs on the host as its run-as user.
ContainersOptional = "optional"

const // ContainersRequired: every job must name an environment with an
// image (or a build); a job that names none is refused at submit.
ContainersRequired = "required"

const // ContainersOff: the location's hosts run nothing in containers; a
// job with an image is refused at submit.
ContainersOff = "off"
