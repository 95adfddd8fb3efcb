package armcompute

import (
	"encoding/json"
	"time"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

// KubernetesProperties are an attached Kubernetes compute's, Azure's
// KubernetesProperties: namespace and default instance type.
// InstanceTypes is read-only here (a kubernetes location's config
// defines them; a PUT's are ignored) and ScaleSettings is Shoal's own
// (Azure's attached compute has no node bounds, Shoal's autoscaler
// needs them), as an AmlCompute's.
type KubernetesProperties struct {
	Namespace           string                        `json:"namespace,omitempty"`
	DefaultInstanceType string                        `json:"defaultInstanceType,omitempty"`
	InstanceTypes       map[string]InstanceTypeSchema `json:"instanceTypes,omitempty"`
	ScaleSettings       *ScaleSettings                `json:"scaleSettings,omitempty"`
}

// InstanceTypeSchema is Azure's: where the pods go and what they ask.
type InstanceTypeSchema struct {
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	Resources    struct {
		Requests map[string]string `json:"requests,omitempty"`
		Limits   map[string]string `json:"limits,omitempty"`
	} `json:"resources"`
}

// kubernetesProperties fills p for attached compute c: its resource_id
// is the cluster's, it is an attached compute, and its instance type is
// listed.
func kubernetesProperties(p *Properties, c *compute.Compute, it *catalog.InstanceType) {
	p.ComputeType = "Kubernetes"
	p.ResourceID, p.IsAttachedCompute = c.ComputeSpec.ResourceID, true
	kp := KubernetesProperties{Namespace: c.Namespace, DefaultInstanceType: c.InstanceType,
		ScaleSettings: &ScaleSettings{MaxNodeCount: c.MaxInstances, MinNodeCount: c.MinInstances}}
	if c.IdleTimeBeforeScaleDown != nil {
		kp.ScaleSettings.NodeIdleTimeBeforeScaleDown = armcore.FormatSeconds(*c.IdleTimeBeforeScaleDown)
	}
	if it != nil {
		var s InstanceTypeSchema
		s.NodeSelector, s.Resources.Requests, s.Resources.Limits = it.NodeSelector, it.Resources.Requests, it.Resources.Limits
		kp.InstanceTypes = map[string]InstanceTypeSchema{it.Name: s}
	}
	p.Properties, _ = json.Marshal(kp)
}

// kubernetesSpec reads a Kubernetes PUT into spec.
func kubernetesSpec(spec *compute.ComputeSpec, p *Properties) error {
	spec.Type = compute.ComputeTypeKubernetes
	spec.ResourceID = p.ResourceID
	// The location follows from resource_id.
	spec.Location = ""
	if len(p.Properties) == 0 {
		return nil
	}
	var kp KubernetesProperties
	if err := json.Unmarshal(p.Properties, &kp); err != nil {
		return core.FieldErrorf("properties.properties", "%v", err)
	}
	spec.Namespace, spec.InstanceType = kp.Namespace, kp.DefaultInstanceType
	if s := kp.ScaleSettings; s != nil {
		spec.MaxInstances, spec.MinInstances = s.MaxNodeCount, s.MinNodeCount
		if s.NodeIdleTimeBeforeScaleDown != "" {
			d, err := armcore.ParseDuration(s.NodeIdleTimeBeforeScaleDown)
			if err != nil {
				return core.FieldErrorf("properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown", "%v", err)
			}
			secs := int(d / time.Second)
			spec.IdleTimeBeforeScaleDown = &secs
		}
	}
	return nil
}
