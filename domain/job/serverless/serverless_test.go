package serverless_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobtest"
	"github.com/shoal-ml/shoal/domain/job/serverless"
)

// serverlessCatalog has a home location with CPU sizes only and a second
// one with GPUs that alone offers the T4 size.
func serverlessCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.NewCatalog([]*catalog.Location{
		{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits(), Sizes: []string{"Standard_DS3_v2", "Standard_DS1_v2", "Standard_D2s_v3"}},
		{Name: "gpu-east", Provider: "fake", Quota: catalog.DefaultQuotaLimits(), GPUs: catalog.GPUCapability{Available: true}},
	}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestNormalizeJobSpecServerlessCompute(t *testing.T) {
	for _, c := range []string{"", "  ", "serverless", "azureml:serverless", "AzureML:Serverless", "azureml:"} {
		s := jobtest.ValidCommandJob()
		s.Compute = c
		if err := jobkind.NormalizeJobSpec(s); err != nil {
			t.Fatalf("compute %q: %v", c, err)
		}
		if s.Compute != jobkind.ServerlessCompute {
			t.Errorf("compute %q normalized to %q, want %q", c, s.Compute, jobkind.ServerlessCompute)
		}
	}
	s := jobtest.ValidCommandJob()
	s.Compute = "azureml:cpu-cluster"
	if err := jobkind.NormalizeJobSpec(s); err != nil || s.Compute != "cpu-cluster" {
		t.Fatalf("a named cluster: %q, %v", s.Compute, err)
	}
}

func TestServerlessTier(t *testing.T) {
	for in, want := range map[string]string{
		"spot": compute.TierLowPriority, "Spot": compute.TierLowPriority,
		"standard": compute.TierDedicated, "": compute.TierDedicated, "null": compute.TierDedicated,
		"basic": compute.TierDedicated, "premium": compute.TierDedicated,
	} {
		if got := serverless.Tier(in); got != want {
			t.Errorf("ServerlessTier(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestServerlessPoolName(t *testing.T) {
	for _, c := range []struct {
		size, loc, tier string
		home            bool
		want            string
	}{
		{"Standard_DS1_v2", "local", compute.TierDedicated, true, "sls-ds1v2-std"},
		{"Standard_DS1_v2", "local", compute.TierLowPriority, true, "sls-ds1v2-spot"},
		{"standard_ds1_v2", "LOCAL", compute.TierDedicated, true, "sls-ds1v2-std"},
		{"Standard_NC4as_T4_v3", "gpu-east", compute.TierDedicated, false, ""}, // too long: hashed
	} {
		got := serverless.PoolName(c.size, c.loc, c.tier, c.home)
		if c.want != "" && got != c.want {
			t.Errorf("ServerlessPoolName(%q, %q, %q) = %q, want %q", c.size, c.loc, c.tier, got, c.want)
		}
		if err := compute.ValidateComputeName(got); err != nil {
			t.Errorf("ServerlessPoolName(%q, %q, %q) = %q: %v", c.size, c.loc, c.tier, got, err)
		}
		if again := serverless.PoolName(c.size, c.loc, c.tier, c.home); again != got {
			t.Errorf("not deterministic: %q then %q", got, again)
		}
	}
	// Every built-in size at a long location name, both tiers: valid,
	// and no two pools share a name.
	seen := map[string]string{}
	for _, s := range catalog.BuiltinSizes() {
		for _, loc := range []string{"local", "a-very-long-location-name-indeed"} {
			for _, tier := range []string{compute.TierDedicated, compute.TierLowPriority} {
				for _, home := range []bool{true, false} {
					if home && loc != "local" {
						continue
					}
					n := serverless.PoolName(s.Name, loc, tier, home)
					if err := compute.ValidateComputeName(n); err != nil {
						t.Fatalf("%s/%s/%s: %q: %v", s.Name, loc, tier, n, err)
					}
					key := s.Name + "|" + loc + "|" + tier
					if other, dup := seen[strings.ToLower(n)]; dup && other != key {
						t.Fatalf("%q names both %s and %s", n, other, key)
					}
					seen[strings.ToLower(n)] = key
				}
			}
		}
	}
}

func TestPlanServerlessPool(t *testing.T) {
	cat := serverlessCatalog(t)
	job := func(size, tier string) *jobkind.JobSpec {
		s := jobtest.ValidCommandJob()
		if size != "" {
			s.Resources = &jobkind.JobResources{InstanceType: size}
		}
		if tier != "" {
			s.QueueSettings = &jobkind.QueueSettings{JobTier: tier}
		}
		return s
	}
	for _, c := range []struct {
		name, size, tier, wsLoc string
		want                    serverless.Pool
		wantName                string
	}{
		{"default size is the smallest CPU size at home", "", "", "local", serverless.Pool{Tier: compute.TierDedicated}, "sls-ds1v2-std"},
		{"spot is low priority", "", "spot", "local", serverless.Pool{Tier: compute.TierLowPriority}, "sls-ds1v2-spot"},
		{"a size at home", "standard_ds3_v2", "standard", "local", serverless.Pool{Tier: compute.TierDedicated}, "sls-ds3v2-std"},
		{"a size only elsewhere gets the location in its name", "Standard_NC4as_T4_v3", "", "local", serverless.Pool{Tier: compute.TierDedicated}, ""},
		{"the workspace's location comes first", "Standard_DS1_v2", "", "gpu-east", serverless.Pool{Tier: compute.TierDedicated}, "sls-ds1v2-std"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := serverless.PlanPool(cat, c.wsLoc, job(c.size, c.tier))
			if err != nil {
				t.Fatal(err)
			}
			if p.Tier != c.want.Tier {
				t.Errorf("tier %q, want %q", p.Tier, c.want.Tier)
			}
			if c.wantName != "" && p.Name != c.wantName {
				t.Errorf("name %q, want %q", p.Name, c.wantName)
			}
			switch c.name {
			case "default size is the smallest CPU size at home", "spot is low priority":
				if p.Size.Name != "Standard_DS1_v2" || p.Location.Name != "local" {
					t.Errorf("got %s at %s, want Standard_DS1_v2 at local", p.Size.Name, p.Location.Name)
				}
			case "a size only elsewhere gets the location in its name":
				home := serverless.PoolName(p.Size.Name, "gpu-east", p.Tier, true)
				if p.Location.Name != "gpu-east" || p.Name == home || !strings.HasPrefix(p.Name, "sls-nc4ast4v3-g") {
					t.Errorf("got %s at %s, want a name with the location (not %s)", p.Name, p.Location.Name, home)
				}
			case "the workspace's location comes first":
				if p.Location.Name != "gpu-east" {
					t.Errorf("location %s, want the workspace's gpu-east", p.Location.Name)
				}
			}
		})
	}
}

func TestPlanServerlessPoolUnknownSize(t *testing.T) {
	cat := serverlessCatalog(t)
	for _, c := range []struct {
		size     string
		tier     string
		fragment []string
	}{
		{"DS1_v2", "", []string{`unknown VM size "DS1_v2"`, `did you mean "Standard_DS1_v2"`, "Standard_DS3_v2"}},
		{"Standard_DS3_v9", "", []string{`did you mean "Standard_DS3_v2"`}},
		{"Huge_Machine_9000", "", []string{"unknown VM size", "sizes offered for serverless compute: "}},
	} {
		s := jobtest.ValidCommandJob()
		s.Resources = &jobkind.JobResources{InstanceType: c.size}
		_, err := serverless.PlanPool(cat, "local", s)
		var e *core.Error
		if !errors.As(err, &e) || e.Code != core.EINVALID || e.Field != "resources.instance_type" {
			t.Fatalf("size %q: %v, want EINVALID on resources.instance_type", c.size, err)
		}
		for _, f := range c.fragment {
			if !strings.Contains(e.Message, f) {
				t.Errorf("size %q: %q lacks %q", c.size, e.Message, f)
			}
		}
	}
	// A GPU size where no location has GPUs is refused with the reason.
	noGPU, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	s := jobtest.ValidCommandJob()
	s.Resources = &jobkind.JobResources{InstanceType: "Standard_NC4as_T4_v3"}
	_, err = serverless.PlanPool(noGPU, "local", s)
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "GPUs") {
		t.Fatalf("GPU size without GPUs: %v", err)
	}
}

func TestServerlessMaxInstances(t *testing.T) {
	loc := &catalog.Location{Name: "local", Quota: catalog.QuotaLimits{DefaultFamilyDedicatedVCPUs: 16, TotalDedicatedVCPUs: 200, LowPriorityVCPUs: 8}}
	size := &catalog.Size{Name: "Standard_DS3_v2", Family: "standardDSv2Family", VCPUs: 4}
	for _, c := range []struct {
		name   string
		loc    *catalog.Location
		tier   string
		own    int
		hasOwn bool
		need   int
		want   int
	}{
		{"family limit", loc, compute.TierDedicated, 0, false, 1, 4},
		{"the workspace's own limit is lower", loc, compute.TierDedicated, 8, true, 1, 2},
		{"the workspace's own limit is higher than the location's", loc, compute.TierDedicated, 64, true, 1, 4},
		{"low priority", loc, compute.TierLowPriority, 0, false, 1, 2},
		{"never fewer than the job needs", loc, compute.TierDedicated, 0, false, 6, 6},
		{"unlimited", &catalog.Location{Quota: catalog.QuotaLimits{DefaultFamilyDedicatedVCPUs: -1, TotalDedicatedVCPUs: -1}}, compute.TierDedicated, 0, false, 1, serverless.DefaultMaxInstances},
		{"no quota at all", &catalog.Location{}, compute.TierDedicated, 0, false, 1, 1},
	} {
		if got := serverless.MaxInstances(c.loc, size, c.tier, c.own, c.hasOwn, c.need); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
