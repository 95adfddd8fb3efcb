package catalog_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
)

func builtinSizeByName(t *testing.T, name string) *catalog.Size {
	t.Helper()
	for _, s := range catalog.BuiltinSizes() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("BuiltinSizes() has no %s", name)
	return nil
}

func TestBuiltinSizesSeedFacts(t *testing.T) {
	tests := []struct {
		name     string
		vcpus    int
		memoryGB float64
		gpus     int
		gpuModel string
		family   string // checked when not empty
	}{
		{name: "Standard_DS3_v2", vcpus: 4, memoryGB: 14, family: "standardDSv2Family"},
		{name: "Standard_DS12_v2", vcpus: 4, memoryGB: 28},
		{name: "Standard_NC6s_v3", vcpus: 6, memoryGB: 112, gpus: 1, gpuModel: "V100"},
		{name: "Standard_NC24ads_A100_v4", vcpus: 24, memoryGB: 220, gpus: 1, gpuModel: "A100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := builtinSizeByName(t, tt.name)
			if s.VCPUs != tt.vcpus {
				t.Errorf("VCPUs = %d, want %d", s.VCPUs, tt.vcpus)
			}
			if s.MemoryGB != tt.memoryGB {
				t.Errorf("MemoryGB = %v, want %v", s.MemoryGB, tt.memoryGB)
			}
			if s.GPUs != tt.gpus {
				t.Errorf("GPUs = %d, want %d", s.GPUs, tt.gpus)
			}
			if s.GPUModel != tt.gpuModel {
				t.Errorf("GPUModel = %q, want %q", s.GPUModel, tt.gpuModel)
			}
			if tt.family != "" && s.Family != tt.family {
				t.Errorf("Family = %q, want %q", s.Family, tt.family)
			}
		})
	}
}

func TestBuiltinSizesAreComplete(t *testing.T) {
	for _, s := range catalog.BuiltinSizes() {
		t.Run(s.Name, func(t *testing.T) {
			if s.Family == "" {
				t.Error("Family is empty")
			}
			if s.VCPUs <= 0 {
				t.Errorf("VCPUs = %d, want > 0", s.VCPUs)
			}
			if s.MemoryGB <= 0 {
				t.Errorf("MemoryGB = %v, want > 0", s.MemoryGB)
			}
			if !(s.PricePerHour > s.LowPriorityPricePerHour && s.LowPriorityPricePerHour > 0) {
				t.Errorf("prices dedicated %v, low-priority %v: want dedicated > low-priority > 0",
					s.PricePerHour, s.LowPriorityPricePerHour)
			}
			if len(s.SupportedComputeTypes) == 0 {
				t.Error("SupportedComputeTypes is empty")
			}
			if (s.GPUs > 0) != (s.GPUModel != "") {
				t.Errorf("GPUs = %d with GPUModel %q: a model must be set exactly when there are GPUs", s.GPUs, s.GPUModel)
			}
		})
	}
}

func TestBuiltinSizesNamesUnique(t *testing.T) {
	seen := map[string]string{}
	for _, s := range catalog.BuiltinSizes() {
		key := strings.ToLower(s.Name)
		if prev, dup := seen[key]; dup {
			t.Errorf("size %q duplicates %q (names are case-insensitive)", s.Name, prev)
		}
		seen[key] = s.Name
	}
}

func TestBuiltinSizesFreshEachCall(t *testing.T) {
	a, b := catalog.BuiltinSizes(), catalog.BuiltinSizes()
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("lengths %d and %d, want equal and non-zero", len(a), len(b))
	}
	a[0].VCPUs = -1
	if b[0].VCPUs == -1 {
		t.Error("two calls share *Size values")
	}
}

func TestAzureRegionNames(t *testing.T) {
	names := catalog.AzureRegionNames()
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("duplicate region %q", n)
		}
		seen[n] = true
		if n != strings.ToLower(n) {
			t.Errorf("region %q is not lowercase", n)
		}
	}
	for _, want := range []string{"westus", "eastus", "westeurope"} {
		if !seen[want] {
			t.Errorf("AzureRegionNames() lacks %q", want)
		}
	}
}
