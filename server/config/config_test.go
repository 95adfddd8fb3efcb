package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/server/config"
)

func parse(t *testing.T, doc string) *config.Config {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

func catalogOf(t *testing.T, doc string) *catalog.Catalog {
	t.Helper()
	cat, err := parse(t, doc).Catalog(nil)
	if err != nil {
		t.Fatalf("Catalog: %v", err)
	}
	return cat
}

func resolve(t *testing.T, cat *catalog.Catalog, name string) string {
	t.Helper()
	l, err := cat.Location(name)
	if err != nil {
		t.Fatalf("Location(%q): %v", name, err)
	}
	return l.Name
}

func intp(n int) *int { return &n }

func TestDefaults(t *testing.T) {
	for _, doc := range []string{"", "  \n# no settings\n"} {
		cfg := parse(t, doc)
		if cfg.Listen != "" || cfg.DataDir != "" || len(cfg.Locations) != 0 || len(cfg.Sizes) != 0 {
			t.Errorf("Parse(%q) = %+v, want the zero config", doc, cfg)
		}
	}
	cfg, err := config.Load("")
	if err != nil {
		t.Fatalf("Load(\"\"): %v", err)
	}
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatalf("Catalog: %v", err)
	}
	if got := cat.DefaultLocation(); got != "local" {
		t.Errorf("DefaultLocation = %q, want local", got)
	}
	locs := cat.Locations()
	if len(locs) != 1 {
		t.Fatalf("got %d locations, want 1", len(locs))
	}
	l := locs[0]
	if l.Name != "local" || l.Provider != "local" {
		t.Errorf("location = %s/%s, want local/local", l.Name, l.Provider)
	}
	if !slices.Equal(l.Aliases, catalog.AzureRegionNames()) {
		t.Errorf("aliases = %v, want every Azure region", l.Aliases)
	}
	for _, name := range []string{"local", "LOCAL", "westus", "WestUS", "eastus", "westeurope", " japaneast "} {
		if got := resolve(t, cat, name); got != "local" {
			t.Errorf("%q resolves to %q, want local", name, got)
		}
	}
	if _, err := cat.Location("mars"); core.ErrorCode(err) != core.EINVALID || core.ErrorField(err) != "location" {
		t.Errorf("Location(mars) = %v, want EINVALID on location", err)
	}
	q := l.Quota
	if q.DefaultFamilyDedicatedVCPUs != 100 || q.TotalDedicatedVCPUs != 200 || q.LowPriorityVCPUs != 100 || len(q.DedicatedVCPUsPerFamily) != 0 {
		t.Errorf("quota = %+v, want 100 per family, 200 dedicated, 100 low-priority", q)
	}
	if l.GPUs.Available || l.GPUs.Emulated {
		t.Errorf("GPUs = %+v, want none", l.GPUs)
	}
	if l.ProvisioningDelay != 0 || len(l.Sizes) != 0 {
		t.Errorf("delay %v, sizes %v; want 0 and all", l.ProvisioningDelay, l.Sizes)
	}
	if got, want := len(cat.SizesAt(l)), len(catalog.BuiltinSizes()); got != want {
		t.Errorf("%d sizes offered, want every built-in size (%d)", got, want)
	}
	if s, ok := cat.Size("standard_ds3_v2"); !ok || s.Name != "Standard_DS3_v2" {
		t.Errorf("Size(standard_ds3_v2) = %v, %v", s, ok)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shoal.yaml")
	if err := os.WriteFile(path, []byte("listen: 0.0.0.0:7420\ndata_dir: /var/lib/shoal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Listen != "0.0.0.0:7420" || cfg.DataDir != "/var/lib/shoal" {
		t.Errorf("Load = %+v", cfg)
	}
	if err := os.WriteFile(path, []byte("listen: x\nlisten_port: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "listen_port") {
		t.Errorf("Load with an unknown key = %v, want an error naming the file and the key", err)
	}
	if _, err := config.Load(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestLocationClaimsRegion(t *testing.T) {
	cat := catalogOf(t, `
locations:
  - name: local
  - name: gpu-lab
    aliases: [eastus, lab]
    emulated_gpus: true
    provisioning_delay: 3m
    quota:
      total_dedicated_vcpus: -1
      low_priority_vcpus: 0
      dedicated_vcpus_per_family: {standardNCSv3Family: 24}
`)
	if got := cat.DefaultLocation(); got != "local" {
		t.Errorf("DefaultLocation = %q, want the first location, local", got)
	}
	for name, want := range map[string]string{"eastus": "gpu-lab", "EastUS": "gpu-lab", "lab": "gpu-lab", "gpu-lab": "gpu-lab", "westus": "local", "eastus2": "local", "local": "local"} {
		if got := resolve(t, cat, name); got != want {
			t.Errorf("%q resolves to %q, want %q", name, got, want)
		}
	}
	var lab *catalog.Location
	for _, l := range cat.Locations() {
		if l.Name == "local" && slices.Contains(l.Aliases, "eastus") {
			t.Errorf("local also has the alias eastus: %v", l.Aliases)
		}
		if l.Name == "gpu-lab" {
			lab = l
		}
	}
	if lab == nil {
		t.Fatal("no gpu-lab location")
	}
	if !slices.Equal(lab.Aliases, []string{"eastus", "lab"}) {
		t.Errorf("gpu-lab aliases = %v, want only its own", lab.Aliases)
	}
	if lab.ProvisioningDelay != 3*time.Minute {
		t.Errorf("ProvisioningDelay = %v, want 3m", lab.ProvisioningDelay)
	}
	q := lab.Quota
	if q.TotalDedicatedVCPUs != -1 || q.LowPriorityVCPUs != 0 || q.DefaultFamilyDedicatedVCPUs != catalog.DefaultFamilyDedicatedVCPUs {
		t.Errorf("quota = %+v", q)
	}
	if got := q.FamilyLimit("standardncsv3family"); got != 24 {
		t.Errorf("FamilyLimit(NCSv3) = %d, want 24", got)
	}
	if got := q.FamilyLimit("standardDSv2Family"); got != catalog.DefaultFamilyDedicatedVCPUs {
		t.Errorf("FamilyLimit(DSv2) = %d, want the default", got)
	}
}

// A kubernetes location's nodes run one image each (the node image by
// default) and admit gangs whole within a gang timeout: 2m and a 1m
// backoff unless set, 0s turning the timeout off.
func TestKubernetesGangAndImage(t *testing.T) {
	for _, tt := range []struct {
		extra            string
		timeout, backoff time.Duration
	}{
		{"", 2 * time.Minute, time.Minute},
		{", gang_timeout: 30s, gang_backoff: 10s", 30 * time.Second, 10 * time.Second},
		{", gang_timeout: 0s", 0, time.Minute},
	} {
		cat := catalogOf(t, "locations: [{name: k, provider: kubernetes, kubernetes: {namespace: ml, node_image: base:1, agent_image: b"+tt.extra+"}}]")
		l, err := cat.Location("k")
		if err != nil {
			t.Fatal(err)
		}
		if l.NodeImage != "base:1" || l.GangTimeout != tt.timeout || l.GangBackoff != tt.backoff {
			t.Errorf("%q: node image %q, gang timeout %v, backoff %v; want base:1, %v, %v", tt.extra, l.NodeImage, l.GangTimeout, l.GangBackoff, tt.timeout, tt.backoff)
		}
	}
	cat := catalogOf(t, "locations: [{name: local}]")
	if l, _ := cat.Location("local"); l.NodeImage != "" || l.GangTimeout != 0 {
		t.Errorf("a local location: node image %q, gang timeout %v; want neither", l.NodeImage, l.GangTimeout)
	}
}

func TestDefaultLocationSetting(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		def     string            // wanted DefaultLocation
		resolve map[string]string // name -> location
		errPart string            // when Catalog must fail
	}{
		{name: "by name", doc: "default_location: b\nlocations: [{name: a}, {name: b}]", def: "b",
			resolve: map[string]string{"westus": "b", "a": "a"}},
		{name: "by name, other case", doc: "default_location: B\nlocations: [{name: a}, {name: b}]", def: "b",
			resolve: map[string]string{"westus": "b"}},
		{name: "by alias", doc: "default_location: lab\nlocations: [{name: a}, {name: b, aliases: [lab]}]", def: "b",
			resolve: map[string]string{"westus": "b", "lab": "b"}},
		{name: "region aliases off", doc: "azure_region_aliases: false\nlocations: [{name: a}]", def: "a",
			resolve: map[string]string{"a": "a", "westus": ""}},
		{name: "unknown default", doc: "default_location: nowhere\nlocations: [{name: a}]", errPart: "nowhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, err := parse(t, tt.doc).Catalog(nil)
			if tt.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errPart) {
					t.Fatalf("Catalog = %v, want an error containing %q", err, tt.errPart)
				}
				return
			}
			if err != nil {
				t.Fatalf("Catalog: %v", err)
			}
			if got := cat.DefaultLocation(); got != tt.def {
				t.Errorf("DefaultLocation = %q, want %q", got, tt.def)
			}
			for name, want := range tt.resolve {
				l, err := cat.Location(name)
				switch {
				case want == "" && err == nil:
					t.Errorf("%q resolves to %q, want unknown", name, l.Name)
				case want != "" && err != nil:
					t.Errorf("%q: %v, want %q", name, err, want)
				case want != "" && l.Name != want:
					t.Errorf("%q resolves to %q, want %q", name, l.Name, want)
				}
			}
		})
	}
}

func TestCustomSizes(t *testing.T) {
	cat := catalogOf(t, `
sizes:
  - name: Lab_Box
    vcpus: 8
    memory_gb: 32
    price_per_hour: 0.5
  - name: Lab_GPU_Box
    vcpus: 16
    memory_gb: 64
    gpus: 2
  - name: standard_ds3_v2
    family: standardDSv2Family
    vcpus: 6
    memory_gb: 20
    low_priority_capable: false
`)
	box, ok := cat.Size("lab_box")
	if !ok {
		t.Fatal("Lab_Box is not in the catalog")
	}
	if box.Name != "Lab_Box" || box.VCPUs != 8 || box.MemoryGB != 32 || box.PricePerHour != 0.5 || !box.LowPriorityCapable || box.GPUs != 0 {
		t.Errorf("Lab_Box = %+v", box)
	}
	if box.Family == "" || !box.Supports(compute.ComputeTypeCluster) || !box.Supports(compute.ComputeTypeInstance) {
		t.Errorf("Lab_Box family %q, types %v: want a family and both compute types", box.Family, box.SupportedComputeTypes)
	}
	gpu, _ := cat.Size("Lab_GPU_Box")
	if gpu == nil || gpu.GPUs != 2 || gpu.GPUModel == "" {
		t.Errorf("Lab_GPU_Box = %+v, want 2 GPUs with a model", gpu)
	}

	// A size of the same name (in any case) replaces the built-in one.
	ds3, _ := cat.Size("Standard_DS3_v2")
	if ds3 == nil || ds3.VCPUs != 6 || ds3.LowPriorityCapable {
		t.Errorf("Standard_DS3_v2 = %+v, want the config's definition", ds3)
	}
	n := 0
	for _, s := range cat.SizesAt(cat.Locations()[0]) {
		if strings.EqualFold(s.Name, "Standard_DS3_v2") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("Standard_DS3_v2 listed %d times, want once", n)
	}

	// The custom size is usable by a cluster.
	spec := &compute.ComputeSpec{Name: "lab-cluster", Size: "LAB_BOX", Tier: "low_priority", MaxInstances: intp(4)}
	_, size, err := compute.NormalizeClusterSpec(spec, cat, "local")
	if err != nil {
		t.Fatalf("NormalizeClusterSpec with Lab_Box: %v", err)
	}
	if size != box {
		t.Errorf("resolved size %v, want Lab_Box", size)
	}
	// The replaced built-in now refuses low priority.
	_, _, err = compute.NormalizeClusterSpec(&compute.ComputeSpec{Name: "lab-cluster", Tier: "LowPriority"}, cat, "local")
	if core.ErrorField(err) != "tier" {
		t.Errorf("low priority on the replaced default size = %v, want an error on tier", err)
	}
	// A GPU size still needs GPUs.
	_, _, err = compute.NormalizeClusterSpec(&compute.ComputeSpec{Name: "lab-cluster", Size: "Lab_GPU_Box"}, cat, "local")
	if core.ErrorField(err) != "size" || !strings.Contains(core.ErrorMessage(err), "emulated_gpus") {
		t.Errorf("Lab_GPU_Box without GPUs = %v, want an error on size naming emulated_gpus", err)
	}
}

func TestEmulatedGPUs(t *testing.T) {
	cat := catalogOf(t, "locations:\n  - name: local\n    emulated_gpus: true\n")
	loc := cat.Locations()[0]
	if !loc.GPUs.Available || !loc.GPUs.Emulated || !strings.Contains(loc.GPUs.Detail, "emulated") {
		t.Errorf("GPUs = %+v, want available, emulated, and said so", loc.GPUs)
	}
	if resolve(t, cat, "westus") != "local" {
		t.Error("westus is not an alias of local")
	}
	spec := &compute.ComputeSpec{Name: "gpu-training-cluster", Type: "amlcompute", Size: "Standard_NC6s_v3", Tier: "Dedicated", MaxInstances: intp(2), IdleTimeBeforeScaleDown: intp(300)}
	if _, size, err := compute.NormalizeClusterSpec(spec, cat, "local"); err != nil {
		t.Fatalf("GPU cluster on emulated GPUs: %v", err)
	} else if size.GPUs != 1 {
		t.Errorf("size GPUs = %d, want 1", size.GPUs)
	}

	// Emulation wins over detection; detection decides otherwise and its
	// detail is shown when a GPU size is refused.
	detect := func(string) (int, string) { return 0, "nvidia-smi found no devices" }
	emu, err := parse(t, "locations: [{name: a, emulated_gpus: true}, {name: b}]").Catalog(detect)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := emu.Location("a")
	b, _ := emu.Location("b")
	if !a.GPUs.Emulated || b.GPUs.Available || b.GPUs.Detail != "nvidia-smi found no devices" {
		t.Errorf("a %+v, b %+v", a.GPUs, b.GPUs)
	}
	_, _, err = compute.NormalizeClusterSpec(&compute.ComputeSpec{Name: "gpu-cluster", Size: "Standard_NC6s_v3", Location: "b"}, emu, "a")
	if !strings.Contains(core.ErrorMessage(err), "nvidia-smi found no devices") {
		t.Errorf("GPU size at b = %v, want the detector's detail", err)
	}
	found, err := parse(t, "").Catalog(func(string) (int, string) { return 2, "2 NVIDIA GPUs" })
	if err != nil {
		t.Fatal(err)
	}
	if l := found.Locations()[0]; !l.GPUs.Available || l.GPUs.Emulated {
		t.Errorf("detected GPUs = %+v, want available and real", l.GPUs)
	}
}

func TestDurations(t *testing.T) {
	for doc, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "3m": 3 * time.Minute, "1h30m": 90 * time.Minute, "180": 180 * time.Second, "0": 0,
	} {
		cat := catalogOf(t, "locations: [{name: a, provisioning_delay: "+doc+"}]")
		if got := cat.Locations()[0].ProvisioningDelay; got != want {
			t.Errorf("provisioning_delay: %s = %v, want %v", doc, got, want)
		}
	}
	for _, doc := range []string{"soon", "3 minutes", "-5s", "-5", "[1]", "99999999999999"} {
		_, err := config.Parse(strings.NewReader("locations:\n  - name: a\n    provisioning_delay: " + doc + "\n"))
		if err == nil {
			t.Errorf("provisioning_delay: %s parsed, want an error", doc)
			continue
		}
		if !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "duration") {
			t.Errorf("provisioning_delay: %s: error %q, want the line and what a duration looks like", doc, err)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// parse is true when Parse must fail; otherwise Catalog must.
		parse bool
		parts []string
	}{
		{name: "unknown top-level key", doc: "listen: x\nmax_nodes: 3\n", parse: true, parts: []string{"max_nodes", "line 2"}},
		{name: "unknown location key", doc: "locations:\n  - name: a\n    region: westus\n", parse: true, parts: []string{"region"}},
		{name: "unknown quota key", doc: "locations:\n  - name: a\n    quota: {vcpus: 3}\n", parse: true, parts: []string{"vcpus"}},
		{name: "unknown size key", doc: "sizes:\n  - name: x\n    cores: 3\n", parse: true, parts: []string{"cores"}},
		{name: "wrong type", doc: "locations: {name: a}\n", parse: true, parts: []string{"line 1"}},
		{name: "not YAML", doc: "locations: [\n", parse: true},
		{name: "location name with a space", doc: "locations: [{name: \"my lab\"}]", parts: []string{"locations[0]", `name "my lab"`, "letters, digits"}},
		{name: "alias with a space", doc: "locations: [{name: lab, aliases: [\" \"]}]", parts: []string{"locations[0]", `aliases[0] " "`}},
		{name: "unknown provider", doc: "locations: [{name: cloud, provider: aws}]", parts: []string{"locations[0]", `"aws"`, "is not one of local, ssh, slurm, kubernetes, static"}},
		{name: "location without name", doc: "locations: [{name: a}, {provider: local}]", parts: []string{"locations[1]", "name is required"}},
		{name: "ssh without hosts", doc: "locations: [{name: lab, provider: ssh, known_hosts: /k}]", parts: []string{"locations[0]", "provider ssh needs hosts"}},
		{name: "ssh without known_hosts", doc: "locations: [{name: lab, provider: ssh, hosts: [{address: h, user: u, identity_file: /k, vcpus: 4}]}]", parts: []string{"locations[0]", "known_hosts"}},
		{name: "ssh host without vcpus", doc: "locations: [{name: lab, provider: ssh, known_hosts: /k, hosts: [{address: h, user: u, identity_file: /k}]}]", parts: []string{"hosts[0]", "vcpus are required"}},
		{name: "slurm settings on ssh", doc: "locations: [{name: l, provider: local, slurm: {partition: gpu}}]", parts: []string{"locations[0]", "provider: slurm"}},
		{name: "kubernetes without a block", doc: "locations: [{name: k, provider: kubernetes}]", parts: []string{"locations[0]", "needs a kubernetes block"}},
		{name: "kubernetes without namespace", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {node_image: a, agent_image: b}}]", parts: []string{"locations[0]", "kubernetes.namespace: is required"}},
		{name: "kubernetes without agent image", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {namespace: ml, node_image: a}}]", parts: []string{"kubernetes.agent_image: is required"}},
		{name: "kubernetes as root", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {namespace: ml, node_image: a, agent_image: b, security_context: {run_as_user: 0}}}]", parts: []string{"run_as_user: 0 is root"}},
		{name: "kubernetes settings on local", doc: "locations: [{name: l, kubernetes: {namespace: ml}}]", parts: []string{"locations[0]", "provider: kubernetes"}},
		{name: "unknown kubernetes key", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {token: abc}}]", parse: true, parts: []string{"token"}},
		{name: "instance type with a bad quantity", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {namespace: ml, node_image: a, agent_image: b, instance_types: {small: {resources: {requests: {cpu: lots, memory: 1Gi}}}}}}]", parts: []string{"locations[0]", "kubernetes.instance_types.small.resources.requests.cpu", `"lots"`}},
		{name: "instance type asking for disk", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {namespace: ml, node_image: a, agent_image: b, instance_types: {small: {resources: {limits: {cpu: 1, memory: 1Gi, ephemeral-storage: 1Gi}}}}}}]", parts: []string{"limits.ephemeral-storage", "cpu, memory or nvidia.com/gpu"}},
		{name: "unknown default instance type", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {namespace: ml, node_image: a, agent_image: b, default_instance_type: big}}]", parts: []string{`default_instance_type "big"`, "defaultinstancetype"}},
		{name: "unknown instance type key", doc: "locations: [{name: k, provider: kubernetes, kubernetes: {namespace: ml, node_image: a, agent_image: b, instance_types: {small: {affinity: {}}}}}]", parse: true, parts: []string{"affinity"}},
		{name: "unknown slurm key", doc: "locations: [{name: l, provider: slurm, slurm: {queue: gpu}}]", parse: true, parts: []string{"queue"}},
		{name: "gpus neither number nor auto", doc: "locations: [{name: lab, provider: ssh, known_hosts: /k, hosts: [{address: h, user: u, identity_file: /k, vcpus: 4, gpus: many}]}]", parse: true, parts: []string{"gpus must be a number or auto"}},
		{name: "hosts on local", doc: "locations: [{name: l, hosts: [{address: h}]}]", parts: []string{"locations[0]", "provider: ssh"}},
		{name: "duplicate alias", doc: "locations: [{name: a, aliases: [eastus]}, {name: b, aliases: [EastUS]}]", parts: []string{"EastUS", `"a"`, `"b"`}},
		{name: "alias is another location's name", doc: "locations: [{name: a}, {name: b, aliases: [A]}]", parts: []string{`"a"`, `"b"`}},
		{name: "duplicate location", doc: "locations: [{name: a}, {name: a}]", parts: []string{`"a"`}},
		{name: "location offers unknown size", doc: "locations: [{name: a, sizes: [Standard_Nope]}]", parts: []string{"Standard_Nope"}},
		{name: "size without name", doc: "sizes: [{vcpus: 2, memory_gb: 4}]", parts: []string{"sizes[0]", "name is required"}},
		{name: "size without vcpus", doc: "sizes: [{name: Box, memory_gb: 4}]", parts: []string{"sizes[0]", "Box", "vcpus"}},
		{name: "size without memory", doc: "sizes: [{name: Box, vcpus: 2}]", parts: []string{"Box", "memory_gb"}},
		{name: "app bind mounts: the root", doc: "locations: [{name: a, app_bind_mounts_allowed: [/data, /]}]", parts: []string{"locations[0]", `app_bind_mounts_allowed[1] "/"`, "must not be the root"}},
		{name: "app bind mounts: relative", doc: "locations: [{name: a, app_bind_mounts_allowed: [data]}]", parts: []string{`app_bind_mounts_allowed[0] "data"`, "absolute"}},
		{name: "app bind mounts: climbing", doc: "locations: [{name: a, app_bind_mounts_allowed: [/data/../etc]}]", parts: []string{"'..'"}},
		{name: "bad container mode", doc: "locations: [{name: a, containers: always}]", parts: []string{"locations[0]", `containers "always"`, "required, optional (the default), off"}},
		{name: "size with negative GPUs", doc: "sizes: [{name: Box, vcpus: 2, memory_gb: 4, gpus: -1}]", parts: []string{"Box", "gpus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse(strings.NewReader(tt.doc))
			if !tt.parse {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				_, err = cfg.Catalog(nil)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, p := range tt.parts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not contain %q", err, p)
				}
			}
		})
	}
}

// Slurm and static locations: the slurm settings are read as written,
// GPU sizes are left to Slurm (it refuses a pilot its partition cannot
// hold), and a static location needs no settings.
func TestSlurmAndStaticLocations(t *testing.T) {
	c := parse(t, `locations:
  - name: hpc
    provider: slurm
    slurm: {partition: gpu, account: lab, time_limit: "1-00:00:00", conf: /etc/slurm/slurm.conf, agent_binary: /shared/bin/shoal, work_dir: /shared/shoal, sbatch_args: [--qos=low]}
  - name: desks
    provider: static
`)
	sc := c.Locations[0].Slurm
	if sc == nil || sc.Partition != "gpu" || sc.Account != "lab" || sc.TimeLimit != "1-00:00:00" || sc.AgentBinary != "/shared/bin/shoal" || len(sc.SbatchArgs) != 1 {
		t.Fatalf("slurm settings = %+v", sc)
	}
	cat, err := c.Catalog(func(string) (int, string) { return 0, "no GPUs on the server" })
	if err != nil {
		t.Fatal(err)
	}
	hpc, _ := cat.Location("hpc")
	desks, _ := cat.Location("desks")
	if hpc.Provider != "slurm" || !hpc.GPUs.Available || desks.Provider != "static" {
		t.Errorf("hpc %+v, desks %+v", hpc, desks)
	}
	if _, _, err := compute.NormalizeClusterSpec(&compute.ComputeSpec{Name: "gpu-cluster", Size: "Standard_NC6s_v3", Location: "hpc"}, cat, "hpc"); err != nil {
		t.Errorf("a GPU size at a Slurm location: %v", err)
	}
}

// An ssh host's GPUs are a number or auto (asked of nvidia-smi); either
// makes GPU sizes welcome at the location.
func TestSSHHostGPUs(t *testing.T) {
	c := parse(t, `locations:
  - name: lab
    provider: ssh
    known_hosts: /k
    hosts:
      - {address: a, user: u, identity_file: /k, vcpus: 8, gpus: auto, labels: {rack: r1}}
      - {address: b, user: u, identity_file: /k, vcpus: 8, gpus: 2, gpu_model: RTX4090}
`)
	h := c.Locations[0].Hosts
	if !h[0].GPUs.Auto || h[0].Labels["rack"] != "r1" || h[1].GPUs.N != 2 || h[1].GPUs.Auto || h[1].GPUModel != "RTX4090" {
		t.Fatalf("hosts = %+v", h)
	}
	cat, err := c.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	lab, _ := cat.Location("lab")
	if !lab.GPUs.Available || !strings.Contains(lab.GPUs.Detail, "gpus: auto") {
		t.Errorf("GPUs = %+v", lab.GPUs)
	}
}

// curated_environments maps curated names to images; a key that is no
// curated name, or a value that is no image reference, fails the load
// naming the key.
func TestCuratedEnvironments(t *testing.T) {
	cfg, err := config.Parse(strings.NewReader("curated_environments:\n  AzureML-sklearn-1.0-ubuntu20.04-py38-cpu: localhost:5000/sklearn:1.0\n  sklearn-1.5: python:3.11\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.CuratedEnvironments["sklearn-1.5"]; got != "python:3.11" {
		t.Errorf("sklearn-1.5 maps to %q", got)
	}
	for doc, word := range map[string]string{
		"curated_environments:\n  sklearn-1.5: Not An Image\n": "curated_environments.sklearn-1.5",
		"curated_environments:\n  'a b': python\n":             "curated_environments.a b",
	} {
		if _, err := config.Parse(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), word) {
			t.Errorf("%q: %v, want an error naming %s", doc, err, word)
		}
	}
}

// A location's container mode is read as written and defaults to
// optional, also for the built-in location.
func TestContainerModes(t *testing.T) {
	cat := catalogOf(t, "locations: [{name: a, containers: required}, {name: b, containers: off}, {name: c}]")
	for name, want := range map[string]string{"a": catalog.ContainersRequired, "b": catalog.ContainersOff, "c": catalog.ContainersOptional} {
		l, err := cat.Location(name)
		if err != nil {
			t.Fatal(err)
		}
		if l.Containers != want || l.ContainerMode() != want {
			t.Errorf("location %s: containers %q (mode %q), want %q", name, l.Containers, l.ContainerMode(), want)
		}
	}
	if got := catalogOf(t, "").Locations()[0].ContainerMode(); got != catalog.ContainersOptional {
		t.Errorf("built-in location's mode = %q, want optional", got)
	}
	if got := (&catalog.Location{}).ContainerMode(); got != catalog.ContainersOptional {
		t.Errorf("unset mode = %q, want optional", got)
	}
}

// A kubernetes location's instance types (Azure's InstanceType shape)
// become sizes offered there alone; Azure's defaultinstancetype is added
// when the config defines none of that name.
func TestKubernetesInstanceTypes(t *testing.T) {
	doc := `locations:
  - name: local
  - name: k8s
    provider: kubernetes
    kubernetes:
      namespace: ml
      node_image: a
      agent_image: b
      resource_id: /subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod
      default_instance_type: gpu
      instance_types:
        gpu:
          node_selector: {pool: a100}
          tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
          resources:
            requests: {cpu: 3500m, memory: 30Gi, nvidia.com/gpu: 1}
            limits: {cpu: 4, memory: 32Gi, nvidia.com/gpu: 1}
          price_per_hour: 3.5
  - name: k8s-b
    provider: kubernetes
    kubernetes: {namespace: ml, node_image: a, agent_image: b}
`
	cfg, err := config.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := cat.Location("k8s")
	if err != nil {
		t.Fatal(err)
	}
	k := loc.Kubernetes
	if k == nil || k.DefaultInstanceType != "gpu" || strings.Join(k.InstanceTypeNames(), ",") != "defaultinstancetype,gpu" || !strings.HasSuffix(k.ResourceID, "/prod") {
		t.Fatalf("kubernetes location %+v", k)
	}
	gpu, _ := k.InstanceType("gpu")
	if gpu.NodeSelector["pool"] != "a100" || gpu.Resources.Limits["nvidia.com/gpu"] != "1" || gpu.Tolerations[0].Effect != "NoSchedule" {
		t.Errorf("gpu instance type %+v", gpu)
	}
	size, ok := cat.Size("gpu@k8s")
	if !ok || size.VCPUs != 4 || size.MemoryGB != 32 || size.GPUs != 1 || size.PricePerHour != 3.5 || !cat.Offers(loc, size) {
		t.Errorf("gpu@k8s = %+v, %v", size, ok)
	}
	other, _ := cat.Location("k8s-b")
	if cat.Offers(other, size) {
		t.Error("k8s-b offers k8s's instance type")
	}
	if _, ok := cat.Size("defaultinstancetype@k8s-b"); !ok || other.Kubernetes.DefaultInstanceType != "defaultinstancetype" {
		t.Errorf("k8s-b has no defaultinstancetype: %+v", other.Kubernetes)
	}
	if found, _ := cat.KubernetesLocationFor("/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod"); found != loc {
		t.Errorf("resource_id resolves to %v", found)
	}
}

// max_heartbeats_per_second is a positive, finite rate; absent is the
// services' default (0 here).
func TestMaxHeartbeatsPerSecond(t *testing.T) {
	if got := parse(t, "").HeartbeatRate(); got != 0 {
		t.Errorf("absent: %v, want 0 (the default)", got)
	}
	if got := parse(t, "max_heartbeats_per_second: 250\n").HeartbeatRate(); got != 250 {
		t.Errorf("250: %v", got)
	}
	for _, bad := range []string{"0", "-5", ".inf", ".nan"} {
		_, err := config.Parse(strings.NewReader("max_heartbeats_per_second: " + bad + "\n"))
		if err == nil || !strings.Contains(err.Error(), "max_heartbeats_per_second") {
			t.Errorf("max_heartbeats_per_second: %s: %v, want an error naming the key", bad, err)
		}
	}
}
