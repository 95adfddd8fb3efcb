package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
)

// KubernetesConfig backs a location with provider: kubernetes — nodes are
// pods in one namespace of an existing cluster (docs/guides/kubernetes.md).
type KubernetesConfig struct {
	// Kubeconfig is the path of a kubeconfig file; empty uses the
	// in-cluster credentials of the pod the server runs in. Only the
	// path is kept: the file's secrets are never read into the config,
	// shown or logged.
	Kubeconfig string `yaml:"kubeconfig"`
	// Context is the kubeconfig's context to use; empty: its current one.
	Context string `yaml:"context"`
	// Namespace holds the nodes' pods (required).
	Namespace string `yaml:"namespace"`
	// NodeImage is the image of a node provisioned for a job that names
	// none (required); a job naming an image gets nodes of that image.
	NodeImage string `yaml:"node_image"`
	// AgentImage holds the static shoal binary at /shoal (required;
	// images/agent/Containerfile builds it).
	AgentImage string `yaml:"agent_image"`
	// ImagePullPolicy is the pods' (Always, IfNotPresent, Never).
	ImagePullPolicy string `yaml:"image_pull_policy"`
	// NodeSelector, Labels, Tolerations and PriorityClass go on every pod.
	NodeSelector  map[string]string      `yaml:"node_selector"`
	Labels        map[string]string      `yaml:"labels"`
	Tolerations   []KubernetesToleration `yaml:"tolerations"`
	PriorityClass string                 `yaml:"priority_class"`
	// SecurityContext is the pods'; default non-root uid 1000.
	SecurityContext KubernetesSecurityContext `yaml:"security_context"`
	// HostNetwork puts the pods on their node's network.
	HostNetwork bool `yaml:"host_network"`
	// RequestFraction scales CPU and memory requests below the size's
	// limits (default 1: Guaranteed QoS).
	RequestFraction float64 `yaml:"request_fraction"`
	// TerminationGrace is how long a deleted pod's agent has to stop
	// its ranks (default 15s).
	TerminationGrace Duration `yaml:"termination_grace"`
	// GangTimeout is how long the pods of a multi-node job may take to
	// all reach Running (their agents joined) before every one of them
	// is deleted, so that a gang the cluster cannot hold whole holds no
	// pod (Kueue's waitForPodsReady). Unset: DefaultGangTimeout; 0s: off
	// (a gang's pods wait up to the join timeout).
	GangTimeout *Duration `yaml:"gang_timeout"`
	// GangBackoff is how long scale-up for a released gang waits before
	// its pods are asked for again, doubling with each release in a row
	// up to 15 minutes (default DefaultGangBackoff).
	GangBackoff Duration `yaml:"gang_backoff"`
	// ResourceID is the cluster's ARM ID (optional): an attached
	// compute's resource_id names the location by it or by its name.
	ResourceID string `yaml:"resource_id"`
	// InstanceTypes are Azure's InstanceType resources by name; Azure's
	// defaultinstancetype is added when not defined here.
	InstanceTypes map[string]InstanceTypeConfig `yaml:"instance_types"`
	// DefaultInstanceType is what an attached compute naming none runs
	// (default defaultinstancetype).
	DefaultInstanceType string `yaml:"default_instance_type"`
}

// Defaults of a kubernetes location's gang admission.
const (
	DefaultGangTimeout = 2 * time.Minute
	DefaultGangBackoff = time.Minute
)

// gang returns the location's gang timeout and backoff, defaults applied.
func (kc *KubernetesConfig) gang() (timeout, backoff time.Duration) {
	timeout, backoff = DefaultGangTimeout, DefaultGangBackoff
	if kc.GangTimeout != nil {
		timeout = time.Duration(*kc.GangTimeout)
	}
	if kc.GangBackoff > 0 {
		backoff = time.Duration(kc.GangBackoff)
	}
	return timeout, backoff
}

// InstanceTypeConfig is one instance type: where its pods go and what
// they ask for, Kubernetes' quantities as strings ("500m", "4Gi").
type InstanceTypeConfig struct {
	NodeSelector map[string]string      `yaml:"node_selector"`
	Tolerations  []KubernetesToleration `yaml:"tolerations"`
	Resources    struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	// PricePerHour is what a node of the type costs (budgets, cost).
	PricePerHour float64 `yaml:"price_per_hour"`
}

// location is the catalog's view of the block: the resource ID, the
// namespace and the instance types, checked.
func (kc *KubernetesConfig) location() (*catalog.KubernetesLocation, error) {
	k := &catalog.KubernetesLocation{ResourceID: kc.ResourceID, Namespace: kc.Namespace, DefaultInstanceType: kc.DefaultInstanceType}
	names := make([]string, 0, len(kc.InstanceTypes))
	for n := range kc.InstanceTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := kc.InstanceTypes[n]
		it := &catalog.InstanceType{Name: n, NodeSelector: c.NodeSelector,
			Resources: catalog.InstanceTypeResources{Requests: c.Resources.Requests, Limits: c.Resources.Limits}}
		for _, t := range c.Tolerations {
			it.Tolerations = append(it.Tolerations, catalog.KubernetesToleration{Key: t.Key, Operator: t.Operator,
				Value: t.Value, Effect: t.Effect, TolerationSeconds: t.TolerationSeconds})
		}
		if err := it.Check("kubernetes.instance_types." + n); err != nil {
			return nil, errors.New(core.ErrorMessage(err))
		}
		if c.PricePerHour < 0 {
			return nil, fmt.Errorf("kubernetes.instance_types.%s.price_per_hour: must be 0 or more", n)
		}
		k.InstanceTypes = append(k.InstanceTypes, it)
	}
	if _, ok := k.InstanceType(catalog.DefaultInstanceTypeName); !ok {
		k.InstanceTypes = append(k.InstanceTypes, catalog.DefaultInstanceType())
	}
	if k.DefaultInstanceType == "" {
		k.DefaultInstanceType = catalog.DefaultInstanceTypeName
	}
	if _, ok := k.InstanceType(k.DefaultInstanceType); !ok {
		return nil, fmt.Errorf("kubernetes.default_instance_type %q: is not one of the instance types (%s)", k.DefaultInstanceType, strings.Join(k.InstanceTypeNames(), ", "))
	}
	return k, nil
}

// instanceTypeSizes are the location's instance types as catalog sizes.
func (kc *KubernetesConfig) instanceTypeSizes(loc *catalog.Location) []*catalog.Size {
	var out []*catalog.Size
	for _, it := range loc.Kubernetes.InstanceTypes {
		out = append(out, it.Size(loc.Name, kc.InstanceTypes[it.Name].PricePerHour))
	}
	return out
}

// KubernetesToleration is one of the pods' tolerations.
type KubernetesToleration struct {
	Key               string `yaml:"key"`
	Operator          string `yaml:"operator"`
	Value             string `yaml:"value"`
	Effect            string `yaml:"effect"`
	TolerationSeconds *int64 `yaml:"toleration_seconds"`
}

// KubernetesSecurityContext is the pods' security context.
type KubernetesSecurityContext struct {
	RunAsUser  *int64 `yaml:"run_as_user"`
	RunAsGroup *int64 `yaml:"run_as_group"`
	FSGroup    *int64 `yaml:"fs_group"`
}

// check applies the rules the config alone can tell; the provider
// checks the rest when it is built.
func (kc *KubernetesConfig) check() error {
	if kc == nil {
		return errors.New("provider kubernetes needs a kubernetes block (namespace, node_image, agent_image)")
	}
	switch {
	case kc.Namespace == "":
		return errors.New("kubernetes.namespace: is required (the namespace the nodes' pods run in)")
	case kc.NodeImage == "":
		return errors.New("kubernetes.node_image: is required (the image of nodes provisioned for jobs that name none)")
	case kc.AgentImage == "":
		return errors.New("kubernetes.agent_image: is required (the static shoal binary at /shoal; images/agent/Containerfile)")
	case kc.SecurityContext.RunAsUser != nil && *kc.SecurityContext.RunAsUser == 0:
		return errors.New("kubernetes.security_context.run_as_user: 0 is root; a node's pod runs as non-root")
	case kc.RequestFraction < 0 || kc.RequestFraction > 1:
		return fmt.Errorf("kubernetes.request_fraction %g: must be more than 0 and at most 1", kc.RequestFraction)
	}
	return nil
}
