package compute_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/server/config"
)

// A public key in the single-line OpenSSH format (the value does not need to
// be a real key: only its shape is checked).
const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHbYV0vKJ5z1mQJq3i7f0r2sC4kqZ8bq1sYtU5c6r7dA alice@laptop"

func intp(n int) *int    { return &n }
func boolp(b bool) *bool { return &b }

// defaultCatalog is the catalog of a server started without a config file:
// one location `local` that answers to every Azure region name, no GPUs.
func defaultCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, err := (&config.Config{}).Catalog(nil)
	if err != nil {
		t.Fatalf("default catalog: %v", err)
	}
	return cat
}

// labCatalogYAML declares emulated GPUs at `local` plus two custom sizes
// that exercise the size rules a built-in size cannot break, and a second,
// restricted location.
const labCatalogYAML = `
locations:
  - name: local
    emulated_gpus: true
  - name: small-lab
    aliases: [eastus]
    sizes: [Standard_DS1_v2]
sizes:
  - name: Lab_NoSpot
    vcpus: 4
    memory_gb: 16
    low_priority_capable: false
  - name: Lab_InstanceOnly
    vcpus: 2
    memory_gb: 8
    supported_compute_types: [ComputeInstance]
`

func labCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(labCatalogYAML))
	if err != nil {
		t.Fatalf("parse lab config: %v", err)
	}
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatalf("lab catalog: %v", err)
	}
	return cat
}

func TestNormalizeClusterSpecRules(t *testing.T) {
	def := defaultCatalog(t)
	lab := labCatalog(t)

	manyTags := map[string]string{}
	for i := range 51 {
		manyTags[fmt.Sprintf("tag%02d", i)] = "v"
	}
	fiftyTags := map[string]string{}
	for i := range 50 {
		fiftyTags[fmt.Sprintf("tag%02d", i)] = "v"
	}
	goodSSH := &compute.SSHSettings{AdminUsername: "azureuser", SSHKeyValue: testSSHKey}
	uai := func(ids ...string) []compute.UserAssignedIdentity {
		var out []compute.UserAssignedIdentity
		for _, id := range ids {
			out = append(out, compute.UserAssignedIdentity{ResourceID: id})
		}
		return out
	}
	const uaiID = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/trainer"

	tests := []struct {
		name string
		cat  *catalog.Catalog // nil means the default catalog
		spec compute.ComputeSpec
		// field is the field the error must name; "" means the spec is valid.
		field     string
		fragments []string
		// check, for valid specs, inspects the normalised spec.
		check func(t *testing.T, s *compute.ComputeSpec, loc *catalog.Location, size *catalog.Size)
	}{
		// Name: 3 to 24 letters, digits and '-', starting with a letter,
		// every '-' followed later by a letter.
		{name: "name empty", spec: compute.ComputeSpec{}, field: "name", fragments: []string{"required"}},
		{name: "name 2 chars", spec: compute.ComputeSpec{Name: "ab"}, field: "name", fragments: []string{"between 3 and 24"}},
		{name: "name 25 chars", spec: compute.ComputeSpec{Name: strings.Repeat("a", 25)}, field: "name", fragments: []string{"between 3 and 24", "25"}},
		{name: "name 3 chars", spec: compute.ComputeSpec{Name: "abc"}},
		{name: "name 24 chars", spec: compute.ComputeSpec{Name: "private-training-cluster"}},
		{name: "name starts with digit", spec: compute.ComputeSpec{Name: "1cluster"}, field: "name", fragments: []string{"start with a letter"}},
		{name: "name starts with dash", spec: compute.ComputeSpec{Name: "-cluster"}, field: "name", fragments: []string{"start with a letter"}},
		{name: "name with underscore", spec: compute.ComputeSpec{Name: "cpu_cluster"}, field: "name", fragments: []string{"only letters, digits and '-'"}},
		{name: "name with dot", spec: compute.ComputeSpec{Name: "cpu.cluster"}, field: "name", fragments: []string{"only letters, digits and '-'"}},
		{name: "name with space", spec: compute.ComputeSpec{Name: "cpu cluster"}, field: "name", fragments: []string{"only letters, digits and '-'"}},
		{name: "name non-ASCII", spec: compute.ComputeSpec{Name: "clustér"}, field: "name", fragments: []string{"only letters, digits and '-'"}},
		{name: "name dash then digit only", spec: compute.ComputeSpec{Name: "a-1"}, field: "name", fragments: []string{"followed later", "letter"}},
		{name: "name dash then letter later", spec: compute.ComputeSpec{Name: "ab-1c"}},
		{name: "name trailing dash", spec: compute.ComputeSpec{Name: "abc-"}, field: "name", fragments: []string{"followed later"}},
		{name: "name last dash then digits", spec: compute.ComputeSpec{Name: "gpu-a-100"}, field: "name", fragments: []string{"followed later"}},
		{name: "name seed example", spec: compute.ComputeSpec{Name: "gpu-training-cluster"}},
		{name: "name upper case", spec: compute.ComputeSpec{Name: "GPU-Cluster"}},

		// Type.
		{name: "type amlcompute", spec: compute.ComputeSpec{Name: "cpu-cluster", Type: "amlcompute"}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if s.Type != compute.ComputeTypeCluster {
				t.Errorf("Type = %q, want %q", s.Type, compute.ComputeTypeCluster)
			}
		}},
		{name: "type AmlCompute", spec: compute.ComputeSpec{Name: "cpu-cluster", Type: "AmlCompute"}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if s.Type != compute.ComputeTypeCluster {
				t.Errorf("Type = %q, want %q", s.Type, compute.ComputeTypeCluster)
			}
		}},
		{name: "type AMLCOMPUTE", spec: compute.ComputeSpec{Name: "cpu-cluster", Type: "AMLCOMPUTE"}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if s.Type != compute.ComputeTypeCluster {
				t.Errorf("Type = %q, want %q", s.Type, compute.ComputeTypeCluster)
			}
		}},
		{name: "type absent defaults to amlcompute", spec: compute.ComputeSpec{Name: "cpu-cluster"}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if s.Type != compute.ComputeTypeCluster {
				t.Errorf("Type = %q, want %q", s.Type, compute.ComputeTypeCluster)
			}
		}},
		{name: "type aks", spec: compute.ComputeSpec{Name: "cpu-cluster", Type: "aks"}, field: "type", fragments: []string{`unknown compute type "aks"`, "amlcompute", "kubernetes"}},
		{name: "type computeinstance is not a cluster", spec: compute.ComputeSpec{Name: "dev-box", Type: "ComputeInstance"}, field: "type", fragments: []string{"computeinstance", "not a compute cluster"}},

		// Tier.
		{name: "tier dedicated", spec: compute.ComputeSpec{Name: "cpu-cluster", Tier: "dedicated"}, check: wantTier(compute.TierDedicated)},
		{name: "tier Dedicated", spec: compute.ComputeSpec{Name: "cpu-cluster", Tier: "Dedicated"}, check: wantTier(compute.TierDedicated)},
		{name: "tier absent", spec: compute.ComputeSpec{Name: "cpu-cluster"}, check: wantTier(compute.TierDedicated)},
		{name: "tier low_priority", spec: compute.ComputeSpec{Name: "cpu-cluster", Tier: "low_priority"}, check: wantTier(compute.TierLowPriority)},
		{name: "tier LowPriority", spec: compute.ComputeSpec{Name: "cpu-cluster", Tier: "LowPriority"}, check: wantTier(compute.TierLowPriority)},
		{name: "tier spot", spec: compute.ComputeSpec{Name: "cpu-cluster", Tier: "spot"}, field: "tier", fragments: []string{`"spot"`, "dedicated", "low_priority"}},
		{name: "tier low_priority on a size without it", cat: lab, spec: compute.ComputeSpec{Name: "cpu-cluster", Size: "Lab_NoSpot", Tier: "low_priority"}, field: "tier", fragments: []string{"Lab_NoSpot", "low_priority"}},
		{name: "tier dedicated on a size without low priority", cat: lab, spec: compute.ComputeSpec{Name: "cpu-cluster", Size: "Lab_NoSpot"}},

		// Scale settings and defaults.
		{name: "defaults", spec: compute.ComputeSpec{Name: "cpu-cluster"}, check: func(t *testing.T, s *compute.ComputeSpec, loc *catalog.Location, size *catalog.Size) {
			if s.Size != compute.DefaultClusterSize || size.Name != "Standard_DS3_v2" {
				t.Errorf("Size = %q (resolved %q), want Standard_DS3_v2", s.Size, size.Name)
			}
			if s.MinInstances == nil || *s.MinInstances != 0 {
				t.Errorf("MinInstances = %v, want 0", s.MinInstances)
			}
			if s.MaxInstances == nil || *s.MaxInstances != 1 {
				t.Errorf("MaxInstances = %v, want 1", s.MaxInstances)
			}
			if s.IdleTimeBeforeScaleDown == nil || *s.IdleTimeBeforeScaleDown != 120 {
				t.Errorf("IdleTimeBeforeScaleDown = %v, want 120", s.IdleTimeBeforeScaleDown)
			}
			if s.SSHPublicAccessEnabled == nil || *s.SSHPublicAccessEnabled {
				t.Errorf("SSHPublicAccessEnabled = %v, want false", s.SSHPublicAccessEnabled)
			}
			if s.EnableNodePublicIP == nil || !*s.EnableNodePublicIP {
				t.Errorf("EnableNodePublicIP = %v, want true", s.EnableNodePublicIP)
			}
			if s.Location != "local" || loc.Name != "local" {
				t.Errorf("Location = %q (resolved %q), want the workspace's, local", s.Location, loc.Name)
			}
		}},
		{name: "min_instances -1", spec: compute.ComputeSpec{Name: "cpu-cluster", MinInstances: intp(-1)}, field: "min_instances", fragments: []string{"0 or more", "-1"}},
		{name: "max_instances 0", spec: compute.ComputeSpec{Name: "cpu-cluster", MaxInstances: intp(0)}, field: "max_instances", fragments: []string{"1 or more"}},
		{name: "max_instances below min", spec: compute.ComputeSpec{Name: "cpu-cluster", MinInstances: intp(3), MaxInstances: intp(2)}, field: "max_instances", fragments: []string{"min_instances (3)", "got 2"}},
		{name: "min_instances above default max", spec: compute.ComputeSpec{Name: "cpu-cluster", MinInstances: intp(2)}, field: "max_instances", fragments: []string{"min_instances (2)"}},
		{name: "max_instances equal to min", spec: compute.ComputeSpec{Name: "cpu-cluster", MinInstances: intp(2), MaxInstances: intp(2)}},
		{name: "max_instances 10000", spec: compute.ComputeSpec{Name: "cpu-cluster", MaxInstances: intp(10000)}},
		{name: "max_instances 10001", spec: compute.ComputeSpec{Name: "cpu-cluster", MaxInstances: intp(10001)}, field: "max_instances", fragments: []string{"at most 10000"}},
		{name: "idle -1", spec: compute.ComputeSpec{Name: "cpu-cluster", IdleTimeBeforeScaleDown: intp(-1)}, field: "idle_time_before_scale_down", fragments: []string{"0 or more"}},
		{name: "idle 0", spec: compute.ComputeSpec{Name: "cpu-cluster", IdleTimeBeforeScaleDown: intp(0)}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if *s.IdleTimeBeforeScaleDown != 0 {
				t.Errorf("IdleTimeBeforeScaleDown = %d, want 0 kept (not replaced by the default)", *s.IdleTimeBeforeScaleDown)
			}
		}},

		// Size.
		{name: "size unknown", spec: compute.ComputeSpec{Name: "cpu-cluster", Size: "Standard_XYZ"}, field: "size", fragments: []string{`"Standard_XYZ"`, "list-sizes"}},
		{name: "size case-insensitive", spec: compute.ComputeSpec{Name: "cpu-cluster", Size: "STANDARD_DS3_v2"}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, size *catalog.Size) {
			if size.Name != "Standard_DS3_v2" {
				t.Errorf("resolved size = %q, want Standard_DS3_v2", size.Name)
			}
		}},
		{name: "GPU size without GPUs", spec: compute.ComputeSpec{Name: "gpu-cluster", Size: "Standard_NC6s_v3"}, field: "size", fragments: []string{"Standard_NC6s_v3", "GPU", "emulated_gpus", compute.DefaultClusterSize}},
		{name: "GPU size with emulated GPUs", cat: lab, spec: compute.ComputeSpec{Name: "gpu-cluster", Size: "Standard_NC6s_v3"}, check: func(t *testing.T, _ *compute.ComputeSpec, loc *catalog.Location, size *catalog.Size) {
			if size.GPUs != 1 || !loc.GPUs.Emulated {
				t.Errorf("size GPUs = %d, location emulated = %v; want 1 and true", size.GPUs, loc.GPUs.Emulated)
			}
		}},
		{name: "size not offered at the location", cat: lab, spec: compute.ComputeSpec{Name: "cpu-cluster", Location: "eastus"}, field: "size", fragments: []string{"not offered", "small-lab", "list-sizes"}},
		{name: "size offered at the location", cat: lab, spec: compute.ComputeSpec{Name: "cpu-cluster", Location: "eastus", Size: "standard_ds1_v2"}},
		{name: "size without amlcompute support", cat: lab, spec: compute.ComputeSpec{Name: "cpu-cluster", Size: "Lab_InstanceOnly"}, field: "size", fragments: []string{"does not support", "amlcompute"}},

		// Location.
		{name: "location unknown", spec: compute.ComputeSpec{Name: "cpu-cluster", Location: "mars"}, field: "location", fragments: []string{`"mars"`, "local"}},
		{name: "location westus", spec: compute.ComputeSpec{Name: "cpu-cluster", Location: "westus"}, check: wantLocation("westus", "local")},
		{name: "location WestUS", spec: compute.ComputeSpec{Name: "cpu-cluster", Location: "WestUS"}, check: wantLocation("WestUS", "local")},
		{name: "location local", spec: compute.ComputeSpec{Name: "cpu-cluster", Location: "local"}, check: wantLocation("local", "local")},
		{name: "location claimed by another", cat: lab, spec: compute.ComputeSpec{Name: "cpu-cluster", Location: "EastUS", Size: "Standard_DS1_v2"}, check: wantLocation("EastUS", "small-lab")},

		// SSH.
		{name: "ssh enabled without settings", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true)}, field: "ssh_settings", fragments: []string{"ssh_public_access_enabled", "admin_username"}},
		{name: "ssh enabled without key or password", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser"}}, field: "ssh_settings.ssh_key_value", fragments: []string{"required", "admin_password"}},
		{name: "ssh enabled without admin", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{SSHKeyValue: testSSHKey}}, field: "ssh_settings.admin_username", fragments: []string{"required"}},
		{name: "ssh key not a key", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", SSHKeyValue: "not-a-key"}}, field: "ssh_settings.ssh_key_value", fragments: []string{"ssh-rsa", "public key"}},
		{name: "ssh admin root", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "root", SSHKeyValue: testSSHKey}}, field: "ssh_settings.admin_username", fragments: []string{`"root"`, "reserved"}},
		{name: "ssh admin upper case", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "AzureUser", SSHKeyValue: testSSHKey}}, field: "ssh_settings.admin_username", fragments: []string{"lower-case"}},
		{name: "ssh admin starts with digit", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHSettings: &compute.SSHSettings{AdminUsername: "1user", SSHKeyValue: testSSHKey}}, field: "ssh_settings.admin_username", fragments: []string{"starting with a letter"}},
		{name: "ssh password too short", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", AdminPassword: "Pa55!"}}, field: "ssh_settings.admin_password", fragments: []string{"12 to 123"}},
		{name: "ssh password too simple", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", AdminPassword: "passwordpassword"}}, field: "ssh_settings.admin_password", fragments: []string{"three of"}},
		{name: "ssh password strong", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", AdminPassword: "Correct-Horse-42"}}},
		{name: "ssh good settings", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: goodSSH}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if !*s.SSHPublicAccessEnabled || s.SSHSettings.AdminUsername != "azureuser" {
				t.Errorf("SSH settings lost: enabled %v, %+v", *s.SSHPublicAccessEnabled, s.SSHSettings)
			}
		}},
		{name: "ssh PEM key", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHPublicAccessEnabled: boolp(true), SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", SSHKeyValue: "---- BEGIN SSH2 PUBLIC KEY ----\nAAAAB3NzaC1yc2E\n---- END SSH2 PUBLIC KEY ----"}}},
		{name: "ssh disabled with admin only", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser"}}},
		{name: "ssh disabled with a bad key", spec: compute.ComputeSpec{Name: "cpu-cluster", SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", SSHKeyValue: "not-a-key"}}, field: "ssh_settings.ssh_key_value"},

		// Identity.
		{name: "identity without type", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{}}, field: "identity.type", fragments: []string{"required"}},
		{name: "identity SystemAssigned", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "SystemAssigned"}}, check: wantIdentity(compute.IdentitySystemAssigned)},
		{name: "identity none", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "None"}}, check: wantIdentity(compute.IdentityNone)},
		{name: "identity unknown type", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "magic"}}, field: "identity.type", fragments: []string{`"magic"`, "system_assigned"}},
		{name: "identity user_assigned without identities", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "user_assigned"}}, field: "identity.user_assigned_identities", fragments: []string{"at least one", "resource_id"}},
		{name: "identity user_assigned", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "UserAssigned", UserAssignedIdentities: uai(uaiID)}}, check: wantIdentity(compute.IdentityUserAssigned)},
		{name: "identity both", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "SystemAssigned, UserAssigned", UserAssignedIdentities: uai(uaiID)}}, check: wantIdentity(compute.IdentitySystemAndUserAssigned)},
		{name: "identity system_assigned with identities", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "system_assigned", UserAssignedIdentities: uai(uaiID)}}, field: "identity.user_assigned_identities", fragments: []string{"only allowed", "user_assigned"}},
		{name: "identity duplicate resource ids", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "user_assigned", UserAssignedIdentities: uai(uaiID, strings.ToUpper(uaiID))}}, field: "identity.user_assigned_identities[1].resource_id", fragments: []string{"listed twice"}},
		{name: "identity empty resource id", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "user_assigned", UserAssignedIdentities: uai(" ")}}, field: "identity.user_assigned_identities[0].resource_id", fragments: []string{"required"}},
		{name: "identity none with system_assigned", spec: compute.ComputeSpec{Name: "cpu-cluster", Identity: &compute.IdentitySpec{Type: "none,system_assigned"}}, field: "identity.type", fragments: []string{"none cannot be combined"}},

		// Tags and description.
		{name: "tags 50", spec: compute.ComputeSpec{Name: "cpu-cluster", Tags: fiftyTags}},
		{name: "tags 51", spec: compute.ComputeSpec{Name: "cpu-cluster", Tags: manyTags}, field: "tags", fragments: []string{"at most 50", "51"}},
		{name: "tag name with slash", spec: compute.ComputeSpec{Name: "cpu-cluster", Tags: map[string]string{"team/ml": "x"}}, field: "tags.team/ml", fragments: []string{"must not contain"}},
		{name: "tag name empty", spec: compute.ComputeSpec{Name: "cpu-cluster", Tags: map[string]string{" ": "x"}}, field: "tags", fragments: []string{"must not be empty"}},
		{name: "tag name 513 chars", spec: compute.ComputeSpec{Name: "cpu-cluster", Tags: map[string]string{strings.Repeat("k", 513): "x"}}, field: "tags." + strings.Repeat("k", 20), fragments: []string{"512"}},
		{name: "tag value 256 chars", spec: compute.ComputeSpec{Name: "cpu-cluster", Tags: map[string]string{"note": strings.Repeat("v", 256)}}},
		{name: "tag value 257 chars", spec: compute.ComputeSpec{Name: "cpu-cluster", Tags: map[string]string{"note": strings.Repeat("v", 257)}}, field: "tags.note", fragments: []string{"at most 256"}},
		{name: "description 2000", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: strings.Repeat("d", 2000)}},
		{name: "description 2001", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: strings.Repeat("d", 2001)}, field: "description", fragments: []string{"at most 2000"}},
		// A description is printed by the CLI and the studio: terminal
		// escapes (ESC, BEL, CR, DEL, C1) are refused; lines and tabs are not.
		{name: "description with ESC", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: "ok\x1b]0;pwned\x07"}, field: "description", fragments: []string{"control characters"}},
		{name: "description with CR", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: "ok\rfake"}, field: "description", fragments: []string{"control characters"}},
		{name: "description with a right-to-left override", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: "invoice\u202Efdp.exe"}, field: "description", fragments: []string{"bidirectional"}},
		{name: "description with C1 CSI", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: "ok\u009b2J"}, field: "description", fragments: []string{"control characters"}},
		{name: "description with DEL", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: "ok\x7f"}, field: "description", fragments: []string{"control characters"}},
		{name: "description on lines", spec: compute.ComputeSpec{Name: "cpu-cluster", Description: "line one\n\tline two\n"}},

		// Network.
		{name: "subnet without vnet", spec: compute.ComputeSpec{Name: "cpu-cluster", NetworkSettings: &compute.NetworkSettings{Subnet: "training-subnet"}}, field: "network_settings.vnet_name", fragments: []string{"required"}},
		{name: "subnet resource id without vnet", spec: compute.ComputeSpec{Name: "cpu-cluster", NetworkSettings: &compute.NetworkSettings{Subnet: "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/s"}}},
		{name: "vnet and subnet", spec: compute.ComputeSpec{Name: "cpu-cluster", NetworkSettings: &compute.NetworkSettings{VnetName: "ml-vnet", Subnet: "training-subnet"}}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if s.NetworkSettings == nil || s.NetworkSettings.VnetName != "ml-vnet" {
				t.Errorf("NetworkSettings = %+v, want kept", s.NetworkSettings)
			}
		}},
		{name: "empty network settings dropped", spec: compute.ComputeSpec{Name: "cpu-cluster", NetworkSettings: &compute.NetworkSettings{}}, check: func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
			if s.NetworkSettings != nil {
				t.Errorf("NetworkSettings = %+v, want nil", s.NetworkSettings)
			}
		}},

		// A full seed example.
		{name: "seed low-priority GPU cluster", cat: lab, spec: compute.ComputeSpec{
			Name: "spot-training-cluster", Type: "amlcompute", Size: "Standard_NC6s_v3",
			MinInstances: intp(0), MaxInstances: intp(8), IdleTimeBeforeScaleDown: intp(120),
			Tier: "LowPriority", Description: "Low-priority GPU cluster for hyperparameter tuning",
		}, check: wantTier(compute.TierLowPriority)},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat := tt.cat
			if cat == nil {
				cat = def
			}
			spec := tt.spec
			loc, size, err := compute.NormalizeClusterSpec(&spec, cat, "local")
			if tt.field != "" {
				coretest.WantFieldError(t, err, tt.field, tt.fragments...)
				return
			}
			if err != nil {
				t.Fatalf("NormalizeClusterSpec: %v (field %q)", err, core.ErrorField(err))
			}
			if loc == nil || size == nil {
				t.Fatalf("got location %v and size %v, want both", loc, size)
			}
			if tt.check != nil {
				tt.check(t, &spec, loc, size)
			}
			// A normalised spec must normalise again unchanged, as the
			// service does on every apply of a stored compute.
			again := spec
			if _, _, err := compute.NormalizeClusterSpec(&again, cat, "local"); err != nil {
				t.Errorf("normalising the normalised spec again: %v", err)
			}
			if d := compute.ImmutableDifferences(&spec, &again); len(d) != 0 {
				t.Errorf("normalising again changed %v", d)
			}
		})
	}
}

func wantTier(tier string) func(*testing.T, *compute.ComputeSpec, *catalog.Location, *catalog.Size) {
	return func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
		t.Helper()
		if s.Tier != tier {
			t.Errorf("Tier = %q, want %q", s.Tier, tier)
		}
	}
}

func wantLocation(written, resolved string) func(*testing.T, *compute.ComputeSpec, *catalog.Location, *catalog.Size) {
	return func(t *testing.T, s *compute.ComputeSpec, loc *catalog.Location, _ *catalog.Size) {
		t.Helper()
		if s.Location != written {
			t.Errorf("spec Location = %q, want it kept as written, %q", s.Location, written)
		}
		if loc.Name != resolved {
			t.Errorf("resolved location = %q, want %q", loc.Name, resolved)
		}
	}
}

func wantIdentity(typ string) func(*testing.T, *compute.ComputeSpec, *catalog.Location, *catalog.Size) {
	return func(t *testing.T, s *compute.ComputeSpec, _ *catalog.Location, _ *catalog.Size) {
		t.Helper()
		if s.Identity == nil || s.Identity.Type != typ {
			t.Errorf("Identity = %+v, want type %q", s.Identity, typ)
		}
	}
}

func TestDecodeComputeSpec(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// field is the field the error must name; "" with wantErr means a
		// document-level error, and "" without it means success.
		field     string
		wantErr   bool
		fragments []string
		check     func(t *testing.T, s *compute.ComputeSpec)
	}{
		{name: "seed YAML as JSON", doc: `{"$schema": "https://azuremlschemas.azureedge.net/latest/amlCompute.schema.json", "name": "location-example", "type": "amlcompute", "size": "STANDARD_DS3_v2", "min_instances": 0, "max_instances": 2, "idle_time_before_scale_down": 120, "location": "westus"}`,
			check: func(t *testing.T, s *compute.ComputeSpec) {
				if s.Name != "location-example" || s.Size != "STANDARD_DS3_v2" || s.Location != "westus" || *s.MinInstances != 0 || *s.MaxInstances != 2 || *s.IdleTimeBeforeScaleDown != 120 {
					t.Errorf("decoded %+v", s)
				}
			}},
		{name: "unknown top-level key", doc: `{"name": "cpu-cluster", "max_nodes": 4}`, field: "max_nodes", fragments: []string{`unknown key "max_nodes"`, "allowed keys here:", "max_instances", "min_instances", "idle_time_before_scale_down"}},
		{name: "unknown nested key", doc: `{"name": "cpu-cluster", "ssh_settings": {"admin_username": "azureuser", "port": 22}}`, field: "ssh_settings.port", fragments: []string{`unknown key "port"`, "admin_username", "ssh_key_value"}},
		{name: "unknown key in a list item", doc: `{"name": "cpu-cluster", "identity": {"type": "user_assigned", "user_assigned_identities": [{"resource_id": "/x", "foo": 1}]}}`, field: "identity.user_assigned_identities[0].foo", fragments: []string{`unknown key "foo"`, "resource_id"}},
		{name: "nested object not a mapping", doc: `{"name": "cpu-cluster", "ssh_settings": "azureuser"}`, field: "ssh_settings", fragments: []string{"mapping"}},
		{name: "identity list not a list", doc: `{"name": "cpu-cluster", "identity": {"type": "user_assigned", "user_assigned_identities": "/x"}}`, field: "identity.user_assigned_identities", fragments: []string{"list"}},
		{name: "max_instances a string", doc: `{"name": "cpu-cluster", "max_instances": "two"}`, field: "max_instances", fragments: []string{"whole number", `"two"`}},
		{name: "min_instances a fraction", doc: `{"name": "cpu-cluster", "min_instances": 0.5}`, field: "min_instances", fragments: []string{"whole number"}},
		{name: "max_instances written 2.0", doc: `{"name": "cpu-cluster", "max_instances": 2.0}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if s.MaxInstances == nil || *s.MaxInstances != 2 {
				t.Errorf("MaxInstances = %v, want 2", s.MaxInstances)
			}
		}},
		{name: "max_instances written 1e1", doc: `{"name": "cpu-cluster", "max_instances": 1e1}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if s.MaxInstances == nil || *s.MaxInstances != 10 {
				t.Errorf("MaxInstances = %v, want 10", s.MaxInstances)
			}
		}},
		{name: "tags a list", doc: `{"name": "cpu-cluster", "tags": [1]}`, field: "tags", fragments: []string{"mapping"}},
		{name: "tag value a mapping", doc: `{"name": "cpu-cluster", "tags": {"team": {"name": "ml"}}}`, field: "tags.team", fragments: []string{"string, number or boolean"}},
		{name: "ssh_public_access_enabled a string", doc: `{"name": "cpu-cluster", "ssh_public_access_enabled": "yes"}`, field: "ssh_public_access_enabled", fragments: []string{"true or false"}},
		{name: "name a number", doc: `{"name": 42}`, field: "name", fragments: []string{"a string"}},
		{name: "nested value of wrong type", doc: `{"name": "cpu-cluster", "ssh_settings": {"admin_username": ["azureuser"]}}`, field: "ssh_settings.admin_username", fragments: []string{"a string"}},
		{name: "idle PT120S", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "PT120S"}`, check: wantIdle(120)},
		{name: "idle PT2M", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "PT2M"}`, check: wantIdle(120)},
		{name: "idle pt1h2m3s", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "pt1h2m3s"}`, check: wantIdle(3723)},
		{name: "idle string of digits", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "120"}`, check: wantIdle(120)},
		{name: "idle number", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": 120}`, check: wantIdle(120)},
		{name: "idle null", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": null}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if s.IdleTimeBeforeScaleDown != nil {
				t.Errorf("IdleTimeBeforeScaleDown = %d, want absent", *s.IdleTimeBeforeScaleDown)
			}
		}},
		{name: "idle fraction", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": 1.5}`, field: "idle_time_before_scale_down", fragments: []string{"whole number of seconds", "1.5"}},
		{name: "idle bare PT", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "PT"}`, field: "idle_time_before_scale_down", fragments: []string{"ISO 8601"}},
		{name: "idle days", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "P1D"}`, field: "idle_time_before_scale_down", fragments: []string{"PT120S"}},
		{name: "idle a boolean", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": true}`, field: "idle_time_before_scale_down", fragments: []string{"whole number of seconds"}},
		{name: "idle huge number", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": 1e12}`, field: "idle_time_before_scale_down"},
		{name: "idle huge string", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "9223372036854775807"}`, field: "idle_time_before_scale_down"},
		{name: "idle huge duration", doc: `{"name": "cpu-cluster", "idle_time_before_scale_down": "PT99999999H"}`, field: "idle_time_before_scale_down"},
		{name: "top-level vnet_name and subnet_name", doc: `{"name": "private-training-cluster", "vnet_name": "ml-vnet", "subnet_name": "training-subnet"}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			want := compute.NetworkSettings{VnetName: "ml-vnet", Subnet: "training-subnet"}
			if s.NetworkSettings == nil || *s.NetworkSettings != want {
				t.Errorf("NetworkSettings = %+v, want %+v", s.NetworkSettings, want)
			}
		}},
		{name: "network_settings", doc: `{"name": "cpu-cluster", "network_settings": {"vnet_name": "ml-vnet", "subnet": "training-subnet"}}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			if s.NetworkSettings == nil || s.NetworkSettings.Subnet != "training-subnet" {
				t.Errorf("NetworkSettings = %+v", s.NetworkSettings)
			}
		}},
		{name: "both network forms", doc: `{"name": "cpu-cluster", "vnet_name": "ml-vnet", "network_settings": {"vnet_name": "ml-vnet", "subnet": "s"}}`, field: "vnet_name", fragments: []string{"not both"}},
		{name: "top-level vnet_name not a string", doc: `{"name": "cpu-cluster", "vnet_name": 7}`, field: "vnet_name", fragments: []string{"a string"}},
		{name: "tags with numbers and booleans", doc: `{"name": "cpu-cluster", "tags": {"cost_center": 1234, "ratio": 0.5, "prod": false, "team": "data-science", "empty": null}}`, check: func(t *testing.T, s *compute.ComputeSpec) {
			want := map[string]string{"cost_center": "1234", "ratio": "0.5", "prod": "false", "team": "data-science", "empty": ""}
			if fmt.Sprint(s.Tags) != fmt.Sprint(want) {
				t.Errorf("Tags = %v, want %v", s.Tags, want)
			}
		}},
		{name: "read-only keys ignored", doc: `{"name": "cpu-cluster", "id": "/subscriptions/x/computes/cpu-cluster", "resource_id": "/x", "etag": "\"3\"", "provisioning_state": "Succeeded", "provisioning_errors": [], "created_on": "2024-01-01T00:00:00Z", "modified_on": "2024-01-02T00:00:00Z", "created_by": "alice", "allocation_state": "steady", "allocation_state_transition_time": "2024-01-01T00:00:00Z", "current_node_count": 0, "target_node_count": 0, "node_state_counts": {"idle_node_count": 0}}`,
			check: func(t *testing.T, s *compute.ComputeSpec) {
				if s.Name != "cpu-cluster" {
					t.Errorf("Name = %q", s.Name)
				}
			}},
		{name: "$schema accepted", doc: `{"$schema": "https://azuremlschemas.azureedge.net/latest/amlCompute.schema.json", "name": "cpu-cluster"}`},
		{name: "null values accepted", doc: `{"name": "cpu-cluster", "description": null, "tags": null, "size": null, "min_instances": null, "max_instances": null, "ssh_public_access_enabled": null, "ssh_settings": null, "network_settings": null, "identity": null, "vnet_name": null, "subnet_name": null, "location": null, "tier": null}`,
			check: func(t *testing.T, s *compute.ComputeSpec) {
				if s.MinInstances != nil || s.MaxInstances != nil || s.SSHSettings != nil || s.Identity != nil || s.Tags != nil {
					t.Errorf("null values decoded as set: %+v", s)
				}
				if s.NetworkSettings != nil && *s.NetworkSettings != (compute.NetworkSettings{}) {
					t.Errorf("NetworkSettings = %+v, want empty", s.NetworkSettings)
				}
			}},
		{name: "null top-level vnet_name beside network_settings", doc: `{"name": "cpu-cluster", "vnet_name": null, "subnet_name": null, "network_settings": {"vnet_name": "ml-vnet", "subnet": "s"}}`,
			check: func(t *testing.T, s *compute.ComputeSpec) {
				if s.NetworkSettings == nil || s.NetworkSettings.VnetName != "ml-vnet" {
					t.Errorf("NetworkSettings = %+v, want ml-vnet", s.NetworkSettings)
				}
			}},
		{name: "null nested values", doc: `{"name": "cpu-cluster", "ssh_settings": {"admin_username": null}, "identity": {"type": "system_assigned", "user_assigned_identities": null}}`},
		{name: "empty document", doc: "", wantErr: true, fragments: []string{"empty"}},
		{name: "blank document", doc: " \n\t ", wantErr: true, fragments: []string{"empty"}},
		{name: "JSON array document", doc: `[{"name": "cpu-cluster"}]`, wantErr: true, fragments: []string{"must be a mapping", "list"}},
		{name: "JSON string document", doc: `"cpu-cluster"`, wantErr: true, fragments: []string{"must be a mapping"}},
		{name: "truncated document", doc: `{"name": "cpu-cluster"`, wantErr: true, fragments: []string{"mapping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := compute.DecodeComputeSpec([]byte(tt.doc))
			switch {
			case tt.field != "":
				coretest.WantFieldError(t, err, tt.field, tt.fragments...)
				return
			case tt.wantErr:
				coretest.WantFieldError(t, err, "", tt.fragments...)
				return
			}
			if err != nil {
				t.Fatalf("DecodeComputeSpec: %v (field %q)", err, core.ErrorField(err))
			}
			if tt.check != nil {
				tt.check(t, spec)
			}
		})
	}
}

func wantIdle(n int) func(*testing.T, *compute.ComputeSpec) {
	return func(t *testing.T, s *compute.ComputeSpec) {
		t.Helper()
		if s.IdleTimeBeforeScaleDown == nil || *s.IdleTimeBeforeScaleDown != n {
			t.Errorf("IdleTimeBeforeScaleDown = %v, want %d", s.IdleTimeBeforeScaleDown, n)
		}
	}
}

func TestImmutableDifferences(t *testing.T) {
	cat := defaultCatalog(t)
	base := func() *compute.ComputeSpec {
		return &compute.ComputeSpec{
			Name: "cpu-cluster", Type: "amlcompute", Size: "Standard_DS3_v2", Location: "westus",
			Tier: "dedicated", MinInstances: intp(0), MaxInstances: intp(2), IdleTimeBeforeScaleDown: intp(120),
			SSHPublicAccessEnabled: boolp(true),
			SSHSettings:            &compute.SSHSettings{AdminUsername: "azureuser", SSHKeyValue: testSSHKey},
			NetworkSettings:        &compute.NetworkSettings{VnetName: "ml-vnet", Subnet: "training-subnet"},
			Tags:                   map[string]string{"team": "ml"},
			Description:            "before",
			Identity:               &compute.IdentitySpec{Type: "system_assigned"},
		}
	}
	tests := []struct {
		name   string
		change func(s *compute.ComputeSpec)
		// normalize runs NormalizeClusterSpec on the new spec first.
		normalize bool
		want      []string
	}{
		{name: "identical", change: func(*compute.ComputeSpec) {}},
		{name: "size differs only in case", change: func(s *compute.ComputeSpec) { s.Size = "STANDARD_DS3_V2" }},
		{name: "tier spelled the Azure way", change: func(s *compute.ComputeSpec) { s.Tier = "Dedicated" }, normalize: true},
		{name: "type spelled the Azure way", change: func(s *compute.ComputeSpec) { s.Type = "AmlCompute" }, normalize: true},
		{name: "location differs only in case", change: func(s *compute.ComputeSpec) { s.Location = "WestUS" }},
		{name: "ssh key with trailing newline", change: func(s *compute.ComputeSpec) { s.SSHSettings.SSHKeyValue = testSSHKey + "\n" }},
		{name: "mutable fields", change: func(s *compute.ComputeSpec) {
			s.MinInstances, s.MaxInstances, s.IdleTimeBeforeScaleDown = intp(1), intp(9), intp(600)
			s.Tags = map[string]string{"team": "research", "cost_center": "1234"}
			s.Description = "after"
			s.Identity = &compute.IdentitySpec{Type: "none"}
		}},
		{name: "size", change: func(s *compute.ComputeSpec) { s.Size = "Standard_DS4_v2" }, want: []string{"size"}},
		{name: "tier", change: func(s *compute.ComputeSpec) { s.Tier = "low_priority" }, want: []string{"tier"}},
		{name: "tier LowPriority normalised", change: func(s *compute.ComputeSpec) { s.Tier = "LowPriority" }, normalize: true, want: []string{"tier"}},
		{name: "location", change: func(s *compute.ComputeSpec) { s.Location = "eastus" }, want: []string{"location"}},
		{name: "type", change: func(s *compute.ComputeSpec) { s.Type = "computeinstance" }, want: []string{"type"}},
		{name: "ssh access", change: func(s *compute.ComputeSpec) { s.SSHPublicAccessEnabled = boolp(false) }, want: []string{"ssh_public_access_enabled"}},
		{name: "ssh key", change: func(s *compute.ComputeSpec) {
			s.SSHSettings = &compute.SSHSettings{AdminUsername: "azureuser", SSHKeyValue: "ssh-rsa AAAAB3NzaC1yc2E bob@desk"}
		}, want: []string{"ssh_settings"}},
		{name: "ssh admin", change: func(s *compute.ComputeSpec) {
			s.SSHSettings = &compute.SSHSettings{AdminUsername: "trainer", SSHKeyValue: testSSHKey}
		}, want: []string{"ssh_settings"}},
		{name: "ssh settings removed", change: func(s *compute.ComputeSpec) { s.SSHSettings = nil }, want: []string{"ssh_settings"}},
		{name: "network subnet", change: func(s *compute.ComputeSpec) { s.NetworkSettings.Subnet = "other-subnet" }, want: []string{"network_settings"}},
		{name: "network removed", change: func(s *compute.ComputeSpec) { s.NetworkSettings = nil }, want: []string{"network_settings"}},
		{name: "node public ip", change: func(s *compute.ComputeSpec) { s.EnableNodePublicIP = boolp(false) }, want: []string{"enable_node_public_ip"}},
		{name: "several", change: func(s *compute.ComputeSpec) {
			s.Size, s.Tier, s.Location, s.MaxInstances = "Standard_DS4_v2", "low_priority", "eastus", intp(5)
		}, want: []string{"size", "tier", "location"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := base()
			if _, _, err := compute.NormalizeClusterSpec(old, cat, "local"); err != nil {
				t.Fatalf("normalise old: %v", err)
			}
			nu := base()
			if _, _, err := compute.NormalizeClusterSpec(nu, cat, "local"); err != nil {
				t.Fatalf("normalise new: %v", err)
			}
			tt.change(nu)
			if tt.normalize {
				if _, _, err := compute.NormalizeClusterSpec(nu, cat, "local"); err != nil {
					t.Fatalf("normalise changed spec: %v", err)
				}
			}
			got := compute.ImmutableDifferences(old, nu)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ImmutableDifferences = %v, want %v", got, tt.want)
			}
		})
	}
}
