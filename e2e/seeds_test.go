package e2e_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Seed documents (/work/shared/seeds) the examples come from.
const (
	seed000 = "000 Microsoft Learn: Create an Azure Machine Learning compute cluster"
	seed001 = "001 How to Create and Manage Compute Clusters in Azure Machine Learning"
	seed003 = "003 Glossary: ML compute cluster (operator CLI commands)"
)

// seedExample is one compute cluster example from a seed document, as a
// testdata file: a YAML document (File, applied with `compute create -f`)
// or an `az ml compute create` flag command (Args, run with `shoal`
// instead of `az ml`).
type seedExample struct {
	Name string // test name
	Seed string // seed document
	Form string // how the seed writes it: YAML file, Python AmlCompute(...) call, az CLI flags
	File string // testdata/seeds/<File>: a YAML document or, for .args, one CLI argument per line
	// Workspace the example is created in: examples that share a compute
	// name go to different workspaces. The az commands name their own.
	Workspace string
	GPU       bool // needs a GPU size: refused unless the server has (emulated) GPUs
	Want      wantCompute
}

// wantCompute is what `compute show -o json` must return.
type wantCompute struct {
	Name, Size, Location, Tier, Description string
	Min, Max, Idle                          int
	Tags                                    map[string]string
	VnetName, Subnet                        string
}

// seedExamples maps every compute cluster example of seeds 000 and 001 to
// its testdata file. Sizes and locations are kept as written; the tier is
// normalised to dedicated/low_priority; absent keys take az's defaults
// (location: the workspace's, "local"; idle 120 s; tier dedicated).
var seedExamples = []seedExample{
	{
		Name: "000-yaml-location-example", Seed: seed000, Form: "YAML (create-cluster.yml)", File: "location-example.yml", Workspace: "default",
		Want: wantCompute{Name: "location-example", Size: "STANDARD_DS3_v2", Location: "westus", Tier: "dedicated", Min: 0, Max: 2, Idle: 120},
	},
	{
		Name: "000-yaml-low-pri-example", Seed: seed000, Form: "YAML (create-cluster.yml, vm-priority)", File: "low-pri-example.yml", Workspace: "default",
		Want: wantCompute{Name: "low-pri-example", Size: "STANDARD_DS3_v2", Location: "local", Tier: "low_priority", Min: 0, Max: 2, Idle: 120},
	},
	{
		Name: "000-python-basic-example", Seed: seed000, Form: "Python AmlCompute(name=\"basic-example\")", File: "basic-example.yml", Workspace: "default",
		Want: wantCompute{Name: "basic-example", Size: "STANDARD_DS3_v2", Location: "westus", Tier: "dedicated", Min: 0, Max: 2, Idle: 120},
	},
	{
		Name: "000-python-low-pri-example", Seed: seed000, Form: "Python AmlCompute(name=\"low-pri-example\", tier=\"low_priority\")", File: "low-pri-example-sdk.yml", Workspace: "python-sdk",
		Want: wantCompute{Name: "low-pri-example", Size: "STANDARD_DS3_v2", Location: "local", Tier: "low_priority", Min: 0, Max: 2, Idle: 120},
	},
	{
		Name: "001-python-cpu-training-cluster", Seed: seed001, Form: "Python AmlCompute(name=\"cpu-training-cluster\", tier=\"Dedicated\")", File: "cpu-training-cluster.yml", Workspace: "default",
		Want: wantCompute{Name: "cpu-training-cluster", Size: "Standard_DS3_v2", Location: "local", Tier: "dedicated", Min: 0, Max: 4, Idle: 180,
			Description: "CPU cluster for scikit-learn and data processing jobs"},
	},
	{
		Name: "001-python-gpu-training-cluster", Seed: seed001, Form: "Python AmlCompute(name=\"gpu-training-cluster\")", File: "gpu-training-cluster.yml", Workspace: "default", GPU: true,
		Want: wantCompute{Name: "gpu-training-cluster", Size: "Standard_NC6s_v3", Location: "local", Tier: "dedicated", Min: 0, Max: 2, Idle: 300,
			Description: "GPU cluster for PyTorch and TensorFlow training"},
	},
	{
		Name: "001-python-spot-training-cluster", Seed: seed001, Form: "Python AmlCompute(name=\"spot-training-cluster\", tier=\"LowPriority\")", File: "spot-training-cluster.yml", Workspace: "default", GPU: true,
		Want: wantCompute{Name: "spot-training-cluster", Size: "Standard_NC6s_v3", Location: "local", Tier: "low_priority", Min: 0, Max: 8, Idle: 120,
			Description: "Low-priority GPU cluster for hyperparameter tuning"},
	},
	{
		Name: "001-python-private-training-cluster", Seed: seed001, Form: "Python AmlCompute(vnet_name=, subnet_name=)", File: "private-training-cluster.yml", Workspace: "default",
		Want: wantCompute{Name: "private-training-cluster", Size: "Standard_DS3_v2", Location: "local", Tier: "dedicated", Min: 0, Max: 4, Idle: 120,
			Description: "Network-isolated cluster for sensitive data processing", VnetName: "ml-vnet", Subnet: "training-subnet"},
	},
	{
		Name: "001-python-tagged-cpu-training-cluster", Seed: seed001, Form: "Python AmlCompute(tags={...}) (best practices)", File: "cpu-training-cluster-tags.yml", Workspace: "cost-tracking",
		Want: wantCompute{Name: "cpu-training-cluster", Size: "Standard_DS3_v2", Location: "local", Tier: "dedicated", Min: 0, Max: 4, Idle: 120,
			Tags: map[string]string{"team": "data-science", "project": "churn-prediction", "environment": "development"}},
	},
	{
		Name: "001-az-cpu-training-cluster", Seed: seed001, Form: "az ml compute create --name cpu-training-cluster ...", File: "az-cpu-training-cluster.args", Workspace: "ml-workspace-production",
		Want: wantCompute{Name: "cpu-training-cluster", Size: "Standard_DS3_v2", Location: "local", Tier: "dedicated", Min: 0, Max: 4, Idle: 180},
	},
	{
		Name: "001-az-gpu-training-cluster", Seed: seed001, Form: "az ml compute create --name gpu-training-cluster ...", File: "az-gpu-training-cluster.args", Workspace: "ml-workspace-production", GPU: true,
		Want: wantCompute{Name: "gpu-training-cluster", Size: "Standard_NC6s_v3", Location: "local", Tier: "dedicated", Min: 0, Max: 2, Idle: 300},
	},
}

// seed003Commands are the operator commands of seed 003, with its
// placeholders; `az ml` becomes `shoal`.
var seed003Commands = map[string][]string{
	"list":   {"compute", "list", "--workspace-name", "<workspace>", "--resource-group", "<group>"},
	"show":   {"compute", "show", "--name", "<compute>", "--workspace-name", "<workspace>", "--resource-group", "<group>"},
	"create": {"compute", "create", "--file", "<file>", "--workspace-name", "<workspace>", "--resource-group", "<group>"},
	"update": {"compute", "update", "--name", "<compute>", "--min-instances", "0", "--max-instances", "<count>", "--workspace-name", "<workspace>", "--resource-group", "<group>"},
}

// fill replaces the placeholders of a seed 003 command.
func fill(cmd []string, values map[string]string) []string {
	out := make([]string, len(cmd))
	for i, a := range cmd {
		if v, ok := values[a]; ok {
			a = v
		}
		out[i] = a
	}
	return out
}

// createArgs returns the CLI arguments that create the example.
func (ex seedExample) createArgs(t *testing.T) []string {
	t.Helper()
	p := seedFile(t, ex.File)
	if filepath.Ext(p) != ".args" {
		return []string{"compute", "create", "-f", p, "--workspace-name", ex.Workspace}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			args = append(args, line)
		}
	}
	return args
}

// showArgs returns `compute show -n NAME -w WS -o json`.
func (ex seedExample) showArgs() []string {
	return []string{"compute", "show", "-n", ex.Want.Name, "--workspace-name", ex.Workspace, "-o", "json"}
}

// checkCompute compares a compute from `show -o json` with want.
func checkCompute(t *testing.T, c map[string]any, want wantCompute) {
	t.Helper()
	str := func(key, want string) {
		t.Helper()
		if got := jsonStr(c[key]); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	num := func(key string, want int) {
		t.Helper()
		if got := jsonInt(c[key]); got != want {
			t.Errorf("%s = %v, want %d", key, c[key], want)
		}
	}
	str("name", want.Name)
	str("type", "amlcompute")
	str("size", want.Size)
	str("location", want.Location)
	str("tier", want.Tier)
	str("description", want.Description)
	str("provisioning_state", "Succeeded")
	num("min_instances", want.Min)
	num("max_instances", want.Max)
	num("idle_time_before_scale_down", want.Idle)
	gotTags := map[string]string{}
	if m, ok := c["tags"].(map[string]any); ok {
		for k, v := range m {
			gotTags[k] = jsonStr(v)
		}
	} else if c["tags"] != nil {
		t.Errorf("tags = %#v, want a mapping", c["tags"])
	}
	wantTags := want.Tags
	if wantTags == nil {
		wantTags = map[string]string{}
	}
	if !mapsEqual(gotTags, wantTags) {
		t.Errorf("tags = %v, want %v", gotTags, wantTags)
	}
	ns, _ := c["network_settings"].(map[string]any)
	if want.VnetName == "" && want.Subnet == "" {
		if c["network_settings"] != nil {
			t.Errorf("network_settings = %v, want none", c["network_settings"])
		}
	} else if jsonStr(ns["vnet_name"]) != want.VnetName || jsonStr(ns["subnet"]) != want.Subnet {
		t.Errorf("network_settings = %v, want vnet_name %q, subnet %q", c["network_settings"], want.VnetName, want.Subnet)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// listNames returns the compute names `compute list` prints for ws, and
// whether the workspace exists.
func listNames(t *testing.T, env []string, ws string) ([]string, bool) {
	t.Helper()
	stdout, stderr, code := run(t, env, "compute", "list", "--workspace-name", ws, "--query", "[].name", "-o", "json")
	if code != 0 {
		if strings.Contains(stderr, "not found") {
			return nil, false
		}
		t.Fatalf("compute list -w %s: exit code %d: %s", ws, code, stderr)
	}
	var names []string
	if strings.TrimSpace(stdout) != "" {
		names = decodeJSON[[]string](t, stdout)
	}
	return names, true
}

// hostHasGPUs mirrors the local provider's detection: on such a host GPU
// sizes are accepted without emulation.
func hostHasGPUs() bool {
	if e, err := os.ReadDir("/proc/driver/nvidia/gpus"); err == nil && len(e) > 0 {
		return true
	}
	m, _ := filepath.Glob("/dev/nvidia[0-9]*")
	return len(m) > 0
}

// TestSeedExamples creates every CPU example on a default server and checks
// what `show` returns; GPU examples must be refused there, creating nothing.
func TestSeedExamples(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{})
	createWorkspaces(t, s.env, append(seedWorkspaces(), "ops-workspace")...)
	for _, ex := range seedExamples {
		t.Run(ex.Name, func(t *testing.T) {
			t.Parallel()
			t.Logf("seed %s, %s, testdata/seeds/%s", ex.Seed, ex.Form, ex.File)
			if !ex.GPU {
				mustRun(t, s.env, ex.createArgs(t)...)
				checkCompute(t, runJSON[map[string]any](t, s.env, ex.showArgs()...), ex.Want)
				return
			}
			if hostHasGPUs() {
				// A host with GPUs accepts GPU sizes on the default location.
				mustRun(t, s.env, ex.createArgs(t)...)
				return
			}
			stderr, _ := mustFail(t, s.env, ex.createArgs(t)...)
			for _, want := range []string{ex.Want.Size, "GPU", "emulated_gpus"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not mention %q:\n%s", want, stderr)
				}
			}
			// Nothing was created: the compute is absent (or its
			// workspace, which the refused call must not create either).
			if names, ok := listNames(t, s.env, ex.Workspace); slices.Contains(names, ex.Want.Name) {
				t.Errorf("compute list -w %s (workspace exists: %v) shows %s after the refused create: %v", ex.Workspace, ok, ex.Want.Name, names)
			}
			if _, stderr, code := run(t, s.env, ex.showArgs()...); code == 0 || !strings.Contains(stderr, "not found") {
				t.Errorf("show after a refused create: exit code %d, stderr %q; want not found", code, stderr)
			}
		})
	}
	t.Run("003-operator-commands", func(t *testing.T) {
		t.Parallel()
		values := map[string]string{
			"<workspace>": "ops-workspace", "<group>": "ops-rg", "<compute>": "cpu-training-cluster",
			"<file>": seedFile(t, "cpu-training-cluster.yml"), "<count>": "3",
		}
		t.Logf("seed %s", seed003)
		created := runJSON[map[string]any](t, s.env, fill(seed003Commands["create"], values)...)
		want := seedExamples[slices.IndexFunc(seedExamples, func(e seedExample) bool { return e.File == "cpu-training-cluster.yml" })].Want
		checkCompute(t, created, want)

		list := runJSON[[]map[string]any](t, s.env, fill(seed003Commands["list"], values)...)
		if len(list) != 1 || jsonStr(list[0]["name"]) != "cpu-training-cluster" {
			t.Fatalf("list = %v, want only cpu-training-cluster", list)
		}
		checkCompute(t, list[0], want)
		checkCompute(t, runJSON[map[string]any](t, s.env, fill(seed003Commands["show"], values)...), want)

		updated := runJSON[map[string]any](t, s.env, fill(seed003Commands["update"], values)...)
		want.Max = 3
		if got := jsonInt(updated["max_instances"]); got != 3 {
			t.Errorf("update printed max_instances %v, want 3", updated["max_instances"])
		}
		checkCompute(t, runJSON[map[string]any](t, s.env, fill(seed003Commands["show"], values)...), want)
		events := runJSON[[]map[string]any](t, s.env, "compute", "events", "-n", "cpu-training-cluster", "--workspace-name", "ops-workspace")
		if !hasEvent(events, "updated", "max_instances 4→3") {
			t.Errorf("no updated event naming max_instances 4→3: %v", events)
		}
	})
}

// TestSeedGPUExamplesEmulated creates the GPU examples on a server whose
// location declares emulated GPUs, and checks list-sizes there.
func TestSeedGPUExamplesEmulated(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOpts{Config: emulatedGPUConfig})
	createWorkspaces(t, s.env, seedWorkspaces()...)
	for _, ex := range seedExamples {
		if !ex.GPU {
			continue
		}
		t.Run(ex.Name, func(t *testing.T) {
			t.Parallel()
			t.Logf("seed %s, %s, testdata/seeds/%s", ex.Seed, ex.Form, ex.File)
			mustRun(t, s.env, ex.createArgs(t)...)
			checkCompute(t, runJSON[map[string]any](t, s.env, ex.showArgs()...), ex.Want)
		})
	}
	t.Run("list-sizes", func(t *testing.T) {
		t.Parallel()
		sizes := runJSON[[]map[string]any](t, s.env, "compute", "list-sizes", "-o", "json")
		a100 := findByName(sizes, "Standard_NC24ads_A100_v4")
		if a100 == nil {
			t.Fatalf("list-sizes has no Standard_NC24ads_A100_v4 on the emulated-GPU server (%d sizes)", len(sizes))
		}
		if got := jsonInt(a100["gpus"]); got != 1 {
			t.Errorf("Standard_NC24ads_A100_v4 gpus = %v, want 1", a100["gpus"])
		}
		if findByName(sizes, "Standard_DS3_v2") == nil {
			t.Errorf("list-sizes has no Standard_DS3_v2")
		}
	})
}

func findByName(list []map[string]any, name string) map[string]any {
	for _, m := range list {
		if jsonStr(m["name"]) == name {
			return m
		}
	}
	return nil
}

func hasEvent(events []map[string]any, kind, reasonPart string) bool {
	for _, e := range events {
		if jsonStr(e["kind"]) == kind && strings.Contains(jsonStr(e["reason"]), reasonPart) {
			return true
		}
	}
	return false
}
