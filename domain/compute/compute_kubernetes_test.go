package compute_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
)

const k8sResourceID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Kubernetes/connectedClusters/prod"

// k8sCatalog has a local location and a kubernetes one with two
// instance types (the default and a GPU one).
func k8sCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	gpu := &catalog.InstanceType{Name: "gpu-a100", NodeSelector: map[string]string{"pool": "a100"},
		Resources: catalog.InstanceTypeResources{
			Requests: map[string]string{"cpu": "3500m", "memory": "30Gi", "nvidia.com/gpu": "1"},
			Limits:   map[string]string{"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"}}}
	k := &catalog.KubernetesLocation{ResourceID: k8sResourceID, Namespace: "ml", DefaultInstanceType: catalog.DefaultInstanceTypeName,
		InstanceTypes: []*catalog.InstanceType{catalog.DefaultInstanceType(), gpu}}
	sizes := catalog.BuiltinSizes()
	for _, it := range k.InstanceTypes {
		sizes = append(sizes, it.Size("k8s", 0))
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{
		{Name: "local", Provider: "local", Quota: catalog.DefaultQuotaLimits()},
		{Name: "k8s", Provider: "kubernetes", Quota: catalog.DefaultQuotaLimits(), Kubernetes: k,
			GPUs: catalog.GPUCapability{Available: true}},
	}, sizes, "local")
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// Azure's YAML for an attached Kubernetes compute (reference-yaml-compute-kubernetes)
// decodes, and normalises to a cluster on the kubernetes location.
func TestKubernetesComputeFromAzureYAML(t *testing.T) {
	doc := `{"$schema": "https://azuremlschemas.azureedge.net/latest/kubernetesCompute.schema.json",
		"type": "Kubernetes", "name": "k8s-compute", "resource_id": "` + k8sResourceID + `",
		"namespace": "ml", "description": "attached", "tags": {"team": "nlp", "n": 3},
		"identity": {"type": "user_assigned", "user_assigned_identities": [{"resource_id": "/subscriptions/x/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id1"}]}}`
	spec, err := compute.DecodeComputeSpec([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	loc, size, err := compute.NormalizeComputeSpec(spec, k8sCatalog(t), "local")
	if err != nil {
		t.Fatal(err)
	}
	if spec.Type != compute.ComputeTypeKubernetes || loc.Name != "k8s" || spec.Location != "k8s" || spec.ResourceID != k8sResourceID {
		t.Errorf("type %q location %q (%s) resource_id %q", spec.Type, spec.Location, loc.Name, spec.ResourceID)
	}
	if spec.InstanceType != catalog.DefaultInstanceTypeName || spec.Size != "defaultinstancetype@k8s" || size.VCPUs != 1 || size.MemoryGB != 2 {
		t.Errorf("instance type %q size %q %+v; want defaultinstancetype, 1 vCPU, 2Gi", spec.InstanceType, spec.Size, size)
	}
	if *spec.MinInstances != 0 || *spec.MaxInstances != compute.DefaultKubernetesMaxInstances || *spec.IdleTimeBeforeScaleDown != 120 {
		t.Errorf("scale %d..%d idle %d", *spec.MinInstances, *spec.MaxInstances, *spec.IdleTimeBeforeScaleDown)
	}
	if spec.Tags["n"] != "3" || spec.Identity.Type != compute.IdentityUserAssigned || spec.Description != "attached" {
		t.Errorf("tags %v identity %+v", spec.Tags, spec.Identity)
	}
	// The location's name works as resource_id, the namespace defaults
	// to the location's, and the Shoal keys are taken.
	spec, err = compute.DecodeComputeSpec([]byte(`{"type": "kubernetes", "name": "gpus", "resource_id": "K8S", "instance_type": "GPU-A100", "max_instances": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, size, err = compute.NormalizeComputeSpec(spec, k8sCatalog(t), "local"); err != nil {
		t.Fatal(err)
	}
	if spec.Namespace != "ml" || spec.InstanceType != "gpu-a100" || size.VCPUs != 4 || size.GPUs != 1 || *spec.MaxInstances != 2 || size.Family != catalog.InstanceTypeFamily {
		t.Errorf("namespace %q instance type %q size %+v max %d", spec.Namespace, spec.InstanceType, size, *spec.MaxInstances)
	}
}

func TestKubernetesComputeErrors(t *testing.T) {
	cat := k8sCatalog(t)
	for _, tc := range []struct {
		doc, field, says string
	}{
		{`{"type": "kubernetes", "name": "k8s-a"}`, "resource_id", "is required"},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "/subscriptions/x/connectedClusters/other"}`, "resource_id", "kubernetes locations: k8s"},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "local"}`, "resource_id", "not a kubernetes location"},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "k8s", "namespace": "default"}`, "namespace", `namespace "ml"`},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "k8s", "instance_type": "huge"}`, "instance_type", "defaultinstancetype, gpu-a100"},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "k8s", "size": "x"}`, "", ""}, // read-only, ignored
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "k8s", "ssh_settings": {"admin_username": "a"}}`, "ssh_settings", "unknown key"},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "k8s", "properties": {}}`, "properties", "unknown key"},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "k8s", "max_instances": 0}`, "max_instances", "1 or more"},
		{`{"type": "kubernetes", "name": "k8s-a", "resource_id": "k8s", "identity": {"type": "system_assigned,user_assigned"}}`, "identity.type", "not both"},
		{`{"type": "kubernetes", "name": "k", "resource_id": "k8s"}`, "name", "between 3 and 24"},
	} {
		spec, err := compute.DecodeComputeSpec([]byte(tc.doc))
		if err == nil {
			_, _, err = compute.NormalizeComputeSpec(spec, cat, "local")
		}
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.doc, err)
			}
			continue
		}
		if core.ErrorField(err) != tc.field || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s:\n got %v (field %q)\nwant field %q saying %q", tc.doc, err, core.ErrorField(err), tc.field, tc.says)
		}
	}
	// The API's spec (no decode) is refused keys that mean nothing for pods.
	yes := true
	spec := &compute.ComputeSpec{Name: "k8s-a", Type: "kubernetes", ResourceID: "k8s", SSHPublicAccessEnabled: &yes}
	if _, _, err := compute.NormalizeComputeSpec(spec, cat, "local"); core.ErrorField(err) != "ssh_public_access_enabled" {
		t.Errorf("ssh on kubernetes: %v", err)
	}
}

// A cluster's show output (with its own resource_id) still applies: the
// read-only key does not become a Kubernetes resource_id.
func TestClusterResourceIDStaysReadOnly(t *testing.T) {
	spec, err := compute.DecodeComputeSpec([]byte(`{"type": "amlcompute", "name": "cpu-cl", "resource_id": "/subscriptions/x/computes/cpu-cl"}`))
	if err != nil || spec.ResourceID != "" {
		t.Fatalf("%v, resource_id %q", err, spec.ResourceID)
	}
}

// Instance types' sizes are offered only at their own location, and
// their quantities and names are checked.
func TestInstanceTypes(t *testing.T) {
	cat := k8sCatalog(t)
	local, _ := cat.Location("local")
	s, _ := cat.Size("gpu-a100@k8s")
	if cat.Offers(local, s) {
		t.Error("an instance type is offered at another location")
	}
	for _, sz := range cat.SizesAt(local) {
		if sz.OnlyAt != "" {
			t.Errorf("local lists %s", sz.Name)
		}
	}
	for _, tc := range []struct {
		it    catalog.InstanceType
		field string
	}{
		{catalog.InstanceType{Name: "Big_One"}, "instance_types[0]"},
		{catalog.InstanceType{Name: "a", Resources: catalog.InstanceTypeResources{Requests: map[string]string{"cpu": "lots"}}}, "instance_types[0].resources.requests.cpu"},
		{catalog.InstanceType{Name: "a", Resources: catalog.InstanceTypeResources{Limits: map[string]string{"ephemeral-storage": "1Gi"}}}, "instance_types[0].resources.limits.ephemeral-storage"},
		{catalog.InstanceType{Name: "a", Resources: catalog.InstanceTypeResources{Limits: map[string]string{"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "500m"}}}, "instance_types[0].resources.limits.nvidia.com/gpu"},
		{catalog.InstanceType{Name: "a", Resources: catalog.InstanceTypeResources{Requests: map[string]string{"cpu": "2", "memory": "1Gi"}, Limits: map[string]string{"cpu": "1"}}}, "instance_types[0].resources.limits.cpu"},
		{catalog.InstanceType{Name: "a", Resources: catalog.InstanceTypeResources{Requests: map[string]string{"cpu": "2"}}}, "instance_types[0].resources"},
		{catalog.InstanceType{Name: "a", Resources: catalog.InstanceTypeResources{Requests: map[string]string{"cpu": "250m", "memory": "512Mi"}}}, ""},
	} {
		err := tc.it.Check("instance_types[0]")
		if core.ErrorField(err) != tc.field {
			t.Errorf("%+v: %v (field %q), want field %q", tc.it, err, core.ErrorField(err), tc.field)
		}
	}
	for q, want := range map[string]float64{"500m": 0.5, "2": 2, "4Gi": 4 << 30, "1.5G": 1.5e9, "128Mi": 128 << 20, "1e3": 1000} {
		if v, err := catalog.ParseQuantity(q); err != nil || v != want {
			t.Errorf("ParseQuantity(%q) = %v, %v; want %v", q, v, err, want)
		}
	}
}

// A job names an instance type of its kubernetes compute: unknown ones
// are refused with the list, another known one with the rule.
func TestJobInstanceType(t *testing.T) {
	cat := k8sCatalog(t)
	loc, _ := cat.Location("k8s")
	c := &compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "gpus", Type: "kubernetes", InstanceType: "gpu-a100"}}
	if it, err := compute.JobInstanceType(c, loc, ""); err != nil || it.Name != "gpu-a100" {
		t.Errorf("default: %v %v", it, err)
	}
	if it, err := compute.JobInstanceType(c, loc, "GPU-A100"); err != nil || it.Name != "gpu-a100" {
		t.Errorf("named: %v %v", it, err)
	}
	if _, err := compute.JobInstanceType(c, loc, "gpu-h100"); core.ErrorField(err) != "resources.instance_type" || !strings.Contains(err.Error(), "defaultinstancetype, gpu-a100") {
		t.Errorf("unknown: %v", err)
	}
	if _, err := compute.JobInstanceType(c, loc, "defaultinstancetype"); core.ErrorField(err) != "resources.instance_type" || !strings.Contains(err.Error(), "instance_type: defaultinstancetype") {
		t.Errorf("another: %v", err)
	}
}
