package shoal_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal"
)

// serverlessCatalog has a home location with CPU sizes only and a second
// one with GPUs that alone offers the T4 size.
func serverlessCatalog(t *testing.T) *shoal.Catalog {
	t.Helper()
	cat, err := shoal.NewCatalog([]*shoal.Location{
		{Name: "local", Provider: "fake", Quota: shoal.DefaultQuotaLimits(), Sizes: []string{"Standard_DS3_v2", "Standard_DS1_v2", "Standard_D2s_v3"}},
		{Name: "gpu-east", Provider: "fake", Quota: shoal.DefaultQuotaLimits(), GPUs: shoal.GPUCapability{Available: true}},
	}, shoal.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func TestNormalizeJobSpecServerlessCompute(t *testing.T) {
	for _, c := range []string{"", "  ", "serverless", "azureml:serverless", "AzureML:Serverless", "azureml:"} {
		s := validJob()
		s.Compute = c
		if err := shoal.NormalizeJobSpec(s); err != nil {
			t.Fatalf("compute %q: %v", c, err)
		}
		if s.Compute != shoal.ServerlessCompute {
			t.Errorf("compute %q normalized to %q, want %q", c, s.Compute, shoal.ServerlessCompute)
		}
	}
	s := validJob()
	s.Compute = "azureml:cpu-cluster"
	if err := shoal.NormalizeJobSpec(s); err != nil || s.Compute != "cpu-cluster" {
		t.Fatalf("a named cluster: %q, %v", s.Compute, err)
	}
}

func TestServerlessTier(t *testing.T) {
	for in, want := range map[string]string{
		"spot": shoal.TierLowPriority, "Spot": shoal.TierLowPriority,
		"standard": shoal.TierDedicated, "": shoal.TierDedicated, "null": shoal.TierDedicated,
		"basic": shoal.TierDedicated, "premium": shoal.TierDedicated,
	} {
		if got := shoal.ServerlessTier(in); got != want {
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
		{"Standard_DS1_v2", "local", shoal.TierDedicated, true, "sls-ds1v2-std"},
		{"Standard_DS1_v2", "local", shoal.TierLowPriority, true, "sls-ds1v2-spot"},
		{"standard_ds1_v2", "LOCAL", shoal.TierDedicated, true, "sls-ds1v2-std"},
		{"Standard_NC4as_T4_v3", "gpu-east", shoal.TierDedicated, false, ""}, // too long: hashed
	} {
		got := shoal.ServerlessPoolName(c.size, c.loc, c.tier, c.home)
		if c.want != "" && got != c.want {
			t.Errorf("ServerlessPoolName(%q, %q, %q) = %q, want %q", c.size, c.loc, c.tier, got, c.want)
		}
		if err := shoal.ValidateComputeName(got); err != nil {
			t.Errorf("ServerlessPoolName(%q, %q, %q) = %q: %v", c.size, c.loc, c.tier, got, err)
		}
		if again := shoal.ServerlessPoolName(c.size, c.loc, c.tier, c.home); again != got {
			t.Errorf("not deterministic: %q then %q", got, again)
		}
	}
	// Every built-in size at a long location name, both tiers: valid,
	// and no two pools share a name.
	seen := map[string]string{}
	for _, s := range shoal.BuiltinSizes() {
		for _, loc := range []string{"local", "a-very-long-location-name-indeed"} {
			for _, tier := range []string{shoal.TierDedicated, shoal.TierLowPriority} {
				for _, home := range []bool{true, false} {
					if home && loc != "local" {
						continue
					}
					n := shoal.ServerlessPoolName(s.Name, loc, tier, home)
					if err := shoal.ValidateComputeName(n); err != nil {
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
	job := func(size, tier string) *shoal.JobSpec {
		s := validJob()
		if size != "" {
			s.Resources = &shoal.JobResources{InstanceType: size}
		}
		if tier != "" {
			s.QueueSettings = &shoal.QueueSettings{JobTier: tier}
		}
		return s
	}
	for _, c := range []struct {
		name, size, tier, wsLoc string
		want                    shoal.ServerlessPool
		wantName                string
	}{
		{"default size is the smallest CPU size at home", "", "", "local", shoal.ServerlessPool{Tier: shoal.TierDedicated}, "sls-ds1v2-std"},
		{"spot is low priority", "", "spot", "local", shoal.ServerlessPool{Tier: shoal.TierLowPriority}, "sls-ds1v2-spot"},
		{"a size at home", "standard_ds3_v2", "standard", "local", shoal.ServerlessPool{Tier: shoal.TierDedicated}, "sls-ds3v2-std"},
		{"a size only elsewhere gets the location in its name", "Standard_NC4as_T4_v3", "", "local", shoal.ServerlessPool{Tier: shoal.TierDedicated}, ""},
		{"the workspace's location comes first", "Standard_DS1_v2", "", "gpu-east", shoal.ServerlessPool{Tier: shoal.TierDedicated}, "sls-ds1v2-std"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := shoal.PlanServerlessPool(cat, c.wsLoc, job(c.size, c.tier))
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
				home := shoal.ServerlessPoolName(p.Size.Name, "gpu-east", p.Tier, true)
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
		s := validJob()
		s.Resources = &shoal.JobResources{InstanceType: c.size}
		_, err := shoal.PlanServerlessPool(cat, "local", s)
		var e *shoal.Error
		if !errors.As(err, &e) || e.Code != shoal.EINVALID || e.Field != "resources.instance_type" {
			t.Fatalf("size %q: %v, want EINVALID on resources.instance_type", c.size, err)
		}
		for _, f := range c.fragment {
			if !strings.Contains(e.Message, f) {
				t.Errorf("size %q: %q lacks %q", c.size, e.Message, f)
			}
		}
	}
	// A GPU size where no location has GPUs is refused with the reason.
	noGPU, err := shoal.NewCatalog([]*shoal.Location{{Name: "local", Provider: "fake", Quota: shoal.DefaultQuotaLimits()}}, shoal.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	s := validJob()
	s.Resources = &shoal.JobResources{InstanceType: "Standard_NC4as_T4_v3"}
	_, err = shoal.PlanServerlessPool(noGPU, "local", s)
	if shoal.ErrorCode(err) != shoal.EINVALID || !strings.Contains(shoal.ErrorMessage(err), "GPUs") {
		t.Fatalf("GPU size without GPUs: %v", err)
	}
}

func TestServerlessMaxInstances(t *testing.T) {
	loc := &shoal.Location{Name: "local", Quota: shoal.QuotaLimits{DefaultFamilyDedicatedVCPUs: 16, TotalDedicatedVCPUs: 200, LowPriorityVCPUs: 8}}
	size := &shoal.Size{Name: "Standard_DS3_v2", Family: "standardDSv2Family", VCPUs: 4}
	for _, c := range []struct {
		name   string
		loc    *shoal.Location
		tier   string
		own    int
		hasOwn bool
		need   int
		want   int
	}{
		{"family limit", loc, shoal.TierDedicated, 0, false, 1, 4},
		{"the workspace's own limit is lower", loc, shoal.TierDedicated, 8, true, 1, 2},
		{"the workspace's own limit is higher than the location's", loc, shoal.TierDedicated, 64, true, 1, 4},
		{"low priority", loc, shoal.TierLowPriority, 0, false, 1, 2},
		{"never fewer than the job needs", loc, shoal.TierDedicated, 0, false, 6, 6},
		{"unlimited", &shoal.Location{Quota: shoal.QuotaLimits{DefaultFamilyDedicatedVCPUs: -1, TotalDedicatedVCPUs: -1}}, shoal.TierDedicated, 0, false, 1, shoal.DefaultServerlessMaxInstances},
		{"no quota at all", &shoal.Location{}, shoal.TierDedicated, 0, false, 1, 1},
	} {
		if got := shoal.ServerlessMaxInstances(c.loc, size, c.tier, c.own, c.hasOwn, c.need); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
