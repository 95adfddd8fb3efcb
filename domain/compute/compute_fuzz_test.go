package compute_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/server/config"
)

// computeFuzzSeeds are the seed documents' compute examples written as the
// JSON the CLI sends, plus documents that break one rule or another.
var computeFuzzSeeds = []string{
	// 000: the basic Python SDK example and the CLI YAML examples.
	`{"name": "basic-example", "type": "amlcompute", "size": "STANDARD_DS3_v2", "location": "westus", "min_instances": 0, "max_instances": 2, "idle_time_before_scale_down": 120}`,
	`{"$schema": "https://azuremlschemas.azureedge.net/latest/amlCompute.schema.json", "name": "location-example", "type": "amlcompute", "size": "STANDARD_DS3_v2", "min_instances": 0, "max_instances": 2, "idle_time_before_scale_down": 120, "location": "westus"}`,
	`{"$schema": "https://azuremlschemas.azureedge.net/latest/amlCompute.schema.json", "name": "low-pri-example", "type": "amlcompute", "size": "STANDARD_DS3_v2", "min_instances": 0, "max_instances": 2, "idle_time_before_scale_down": 120, "tier": "low_priority"}`,
	// 001: the practitioner's guide.
	`{"name": "cpu-training-cluster", "type": "amlcompute", "size": "Standard_DS3_v2", "min_instances": 0, "max_instances": 4, "idle_time_before_scale_down": 180, "tier": "Dedicated", "description": "CPU cluster for scikit-learn and data processing jobs"}`,
	`{"name": "gpu-training-cluster", "type": "amlcompute", "size": "Standard_NC6s_v3", "min_instances": 0, "max_instances": 2, "idle_time_before_scale_down": 300, "tier": "Dedicated", "description": "GPU cluster for PyTorch and TensorFlow training"}`,
	`{"name": "spot-training-cluster", "type": "amlcompute", "size": "Standard_NC6s_v3", "min_instances": 0, "max_instances": 8, "idle_time_before_scale_down": 120, "tier": "LowPriority", "description": "Low-priority GPU cluster for hyperparameter tuning"}`,
	`{"name": "private-training-cluster", "type": "amlcompute", "size": "Standard_DS3_v2", "min_instances": 0, "max_instances": 4, "vnet_name": "ml-vnet", "subnet_name": "training-subnet", "description": "Network-isolated cluster for sensitive data processing"}`,
	`{"name": "cpu-training-cluster", "size": "Standard_DS3_v2", "min_instances": 0, "max_instances": 4, "tags": {"team": "data-science", "project": "churn-prediction", "environment": "development"}}`,
	// Every key at once, as `show -o json` prints it, applied again.
	`{"name": "ssh-cluster", "type": "AmlCompute", "size": "Standard_D4s_v3", "location": "local", "tier": "dedicated", "min_instances": 1, "max_instances": 3, "idle_time_before_scale_down": "PT2M", "ssh_public_access_enabled": true, "ssh_settings": {"admin_username": "azureuser", "ssh_key_value": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 alice@laptop"}, "network_settings": {"vnet_name": "ml-vnet", "subnet": "default"}, "enable_node_public_ip": false, "identity": {"type": "SystemAssigned,UserAssigned", "user_assigned_identities": [{"resource_id": "/subscriptions/x/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/trainer"}]}, "tags": {"cost_center": 1234, "prod": true}, "id": "/subscriptions/x/computes/ssh-cluster", "provisioning_state": "Succeeded", "created_on": "2024-01-01T00:00:00Z", "node_state_counts": {"idle_node_count": 1}}`,
	// 002: compute instances.
	`{"$schema": "https://azuremlschemas.azureedge.net/latest/computeInstance.schema.json", "name": "basic-example-i", "type": "computeinstance", "size": "STANDARD_DS3_v2"}`,
	`{"name": "idle-ci", "type": "computeinstance", "idle_time_before_shutdown_minutes": "30"}`,
	`{"name": "idle-ci", "type": "computeinstance", "idle_time_before_shutdown": "PT30M"}`,
	`{"name": "schedule-example-i", "type": "computeinstance", "schedules": {"compute_start_stop": [{"action": "stop", "trigger": {"type": "cron", "start_time": "2021-03-10T21:21:07", "time_zone": "Pacific Standard Time", "expression": "0 18 * * *"}}]}}`,
	`{"name": "ci-name", "type": "computeinstance", "schedules": {"compute_start_stop": [{"action": "start", "trigger": {"type": "recurrence", "start_time": "2023-06-21T11:47:00", "time_zone": "India Standard Time", "frequency": "week", "interval": 1, "schedule": {"week_days": ["Friday"], "hours": 15, "minutes": [30]}}}]}}`,
	`{"name": "behalf-i", "type": "computeinstance", "create_on_behalf_of": {"user_object_id": "alice"}, "ssh_public_access_enabled": true, "ssh_settings": {"ssh_key_value": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 a@b", "admin_username": "azureuser", "ssh_port": 50000}, "setup_scripts": {"creation_script": {"command": "echo hi", "timeout_minutes": 5}}, "custom_applications": [{"name": "web", "command": "python3 -m http.server 8080", "endpoints": [{"target": 8080, "published": 8080}], "environment_variables": {"A": "b"}}], "identity": {"type": "system_assigned"}, "idle_cpu_percent_below": 10, "max_concurrent_jobs": 2, "release_quota_on_stop": true, "state": "Running", "idle_state": {"idle_minutes": 3}}`,
	`{"name": "bad-i", "type": "computeinstance", "idle_time_before_shutdown_minutes": 14, "schedules": {"compute_start_stop": [null, {"action": "reboot"}]}, "custom_applications": [{"name": "jupyter"}]}`,
	`{"name": "bad-i", "type": "computeinstance", "min_instances": 1, "ssh_settings": {"admin_username": "root"}, "setup_scripts": {"startup_script": {}}}`,
	// Broken documents.
	``,
	`null`,
	`[]`,
	`"cpu-cluster"`,
	`{"name": "cpu-cluster"`,
	`{"name": "cpu-cluster", "max_nodes": 4, "min_nodes": 0}`,
	`{"name": "a-1", "max_instances": "two", "tags": [1]}`,
	`{"name": "cpu-cluster", "idle_time_before_scale_down": "PT", "ssh_settings": {"port": 22}}`,
	`{"name": "cpu-cluster", "identity": {"type": "user_assigned", "user_assigned_identities": [null, {"foo": 1}, "x"]}}`,
	`{"name": "cpu-cluster", "tags": {"a/b": {"c": 1}}, "min_instances": 1e300, "max_instances": -0.0}`,
	`{"name": "cpu-cluster", "vnet_name": null, "network_settings": {"subnet": "s"}, "location": "mars", "size": "Standard_NC6s_v3"}`,
	`{"name": "cpu-cluster", "ssh_public_access_enabled": true, "ssh_settings": {"admin_username": "root", "admin_password": "short"}}`,
}

func FuzzDecodeComputeSpec(f *testing.F) {
	for _, s := range computeFuzzSeeds {
		f.Add([]byte(s))
	}
	cat := defaultCatalog(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		spec, err := compute.DecodeComputeSpec(doc)
		if err != nil {
			coretest.FuzzCheckError(t, "DecodeComputeSpec", doc, err)
			return
		}
		if _, _, err := compute.NormalizeComputeSpec(spec, cat, "local"); err != nil {
			coretest.FuzzCheckError(t, "NormalizeComputeSpec", doc, err)
			return
		}
		if spec.Type == compute.ComputeTypeInstance {
			fuzzInstanceRoundTrip(t, cat, spec)
			return
		}
		// A valid spec is complete and within the rules.
		if spec.Type != compute.ComputeTypeCluster || (spec.Tier != compute.TierDedicated && spec.Tier != compute.TierLowPriority) {
			t.Fatalf("not canonical: type %q, tier %q", spec.Type, spec.Tier)
		}
		if spec.MinInstances == nil || spec.MaxInstances == nil || spec.IdleTimeBeforeScaleDown == nil {
			t.Fatalf("defaults not applied: %+v", spec)
		}
		if err := compute.ValidateScaleSettings(*spec.MinInstances, *spec.MaxInstances, *spec.IdleTimeBeforeScaleDown); err != nil {
			t.Fatalf("normalised spec breaks the scale rules: %v", err)
		}
		// What the server returns can be applied again.
		fuzzRoundTrip(t, cat, spec, compute.ImmutableDifferences)
	})
}

// fuzzInstanceRoundTrip checks that a normalised instance spec applies
// again unchanged.
func fuzzInstanceRoundTrip(t *testing.T, cat *catalog.Catalog, spec *compute.ComputeSpec) {
	if m := spec.IdleTimeBeforeShutdownMinutes; m != nil && compute.ValidateIdleShutdownMinutes(*m) != nil {
		t.Fatalf("normalised instance has idle minutes %d", *m)
	}
	if spec.Schedules != nil && len(spec.Schedules.ComputeStartStop) > compute.MaxInstanceSchedules {
		t.Fatalf("normalised instance has %d schedules", len(spec.Schedules.ComputeStartStop))
	}
	fuzzRoundTrip(t, cat, spec, compute.InstanceImmutableDifferences)
}

// fuzzRoundTrip checks that a normalised spec, encoded as the server
// returns it, decodes and normalises to the same spec with no fixed field
// changed: `show -o yaml` applies again.
func fuzzRoundTrip(t *testing.T, cat *catalog.Catalog, spec *compute.ComputeSpec, fixed func(old, new *compute.ComputeSpec) []string) {
	out, err := json.Marshal(spec)
	if err != nil {
		t.Fatalf("encode normalised spec: %v", err)
	}
	again, err := compute.DecodeComputeSpec(out)
	if err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if _, _, err := compute.NormalizeComputeSpec(again, cat, "local"); err != nil {
		t.Fatalf("normalise %s again: %v", out, err)
	}
	if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
		t.Fatalf("round trip changed the spec:\n%s\n%s", out, out2)
	}
	if d := fixed(spec, again); len(d) != 0 {
		t.Fatalf("round trip changed immutable fields %v", d)
	}
}

// configFuzzSeeds are server configs, valid and not.
var configFuzzSeeds = []string{
	``,
	`listen: 127.0.0.1:7420`,
	labCatalogYAML,
	`
default_location: lab
azure_region_aliases: false
locations:
  - name: lab
    provider: local
    provisioning_delay: 3m
    quota: {total_dedicated_vcpus: -1, low_priority_vcpus: 8, dedicated_vcpus_per_family: {standardDSv2Family: 16}}
`,
	`
locations:
  - name: a
    aliases: [eastus]
  - name: b
    aliases: [EastUS]
`,
	`locations: [{name: x, provider: aws}]`,
	`locations: [{name: x, provisioning_delay: soon}]`,
	`locations: [{name: x, provisioning_delay: 99999999999999}]`,
	`sizes: [{name: Box, vcpus: 0, memory_gb: 1}]`,
	`sizes: [{name: standard_ds3_v2, vcpus: 2, memory_gb: 4, gpus: 1}]`,
	`max_nodes: 3`,
	`a: &a [*a, *a]`,
	"locations:\n  - name: [1]\n",
	`{"locations": [{"name": "json"}]}`,
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range configFuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		cfg, err := config.Parse(bytes.NewReader(doc))
		if err != nil {
			return
		}
		cat, err := cfg.Catalog(nil)
		if err != nil {
			return
		}
		// A catalog that builds resolves its own default location.
		if _, err := cat.Location(cat.DefaultLocation()); err != nil {
			t.Fatalf("default location %q does not resolve: %v", cat.DefaultLocation(), err)
		}
		for _, l := range cat.Locations() {
			for _, n := range append([]string{l.Name}, l.Aliases...) {
				if got, err := cat.Location(n); err != nil || got != l {
					t.Fatalf("location %q (name or alias %q) resolves to %v, %v", l.Name, n, got, err)
				}
			}
		}
	})
}
