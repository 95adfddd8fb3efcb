package sshpool_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/internal/testhosts"
	"github.com/shoal-ml/shoal/provider/providertest"
	"github.com/shoal-ml/shoal/provider/sshpool"
)

// shoalBin is the shoal binary the provider copies to the hosts (the test
// binary has no `agent` command).
var shoalBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sshpool-test-")
	if err != nil {
		panic(err)
	}
	shoalBin = filepath.Join(dir, "shoal")
	if err := testenv.ServerBinary(shoalBin); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The conformance suite every provider passes, against a pool of two real
// OpenSSH hosts in network namespaces.
func TestConformance(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 2)
	providertest.Run(t, providertest.Harness{
		New: func(t *testing.T) node.Provider {
			p := newProvider(t, pool)
			t.Cleanup(func() {
				for _, h := range pool.Hosts {
					testhosts.KillUnder(filepath.Join(h.Dir, "shoal"))
				}
			})
			return p
		},
		Started: func(t *testing.T, p node.Provider, ref string) bool {
			// The agent runs on its host: Alive asks the host over SSH.
			node := &node.Node{ID: ref[strings.LastIndex(ref, "/")+1:], ProviderRef: ref, VCPUs: 4}
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if ok, err := p.Alive(context.Background(), node); err == nil && ok {
					return true
				}
				time.Sleep(50 * time.Millisecond)
			}
			return false
		},
	})
}

func newProvider(t *testing.T, pool *testhosts.Pool) *sshpool.Provider {
	t.Helper()
	cfg := sshpool.Config{KnownHostsFile: pool.KnownHosts, Executable: shoalBin}
	for _, h := range pool.Hosts {
		cfg.Hosts = append(cfg.Hosts, sshpool.Host{Address: h.Addr, User: "root", IdentityFile: pool.Key, VCPUs: 64, RemoteDir: filepath.Join(h.Dir, "shoal")})
	}
	p, err := sshpool.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Hosts fill one after another; a host with no room is skipped; none with
// room is EQUOTA, naming the need.
func TestPlacementAndCapacity(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 2)
	cfg := sshpool.Config{KnownHostsFile: pool.KnownHosts, Executable: shoalBin}
	for _, h := range pool.Hosts {
		cfg.Hosts = append(cfg.Hosts, sshpool.Host{Address: h.Addr, User: "root", IdentityFile: pool.Key, VCPUs: 8, RemoteDir: filepath.Join(h.Dir, "shoal")})
	}
	p, err := sshpool.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, h := range pool.Hosts {
			testhosts.KillUnder(filepath.Join(h.Dir, "shoal"))
		}
	})
	ctx := context.Background()
	hosts := map[string]int{}
	var nodes []*node.Node
	for _, id := range []string{"a", "b", "c", "d"} {
		n := providertest.NewNode(id)
		ref, err := p.Provision(ctx, providertest.NewRequest(n))
		if err != nil {
			t.Fatalf("provision %s: %v", id, err)
		}
		n.ProviderRef = ref
		nodes = append(nodes, n)
		hosts[ref[strings.Index(ref, "@")+1:strings.LastIndex(ref, "/")]]++
	}
	if len(hosts) != 2 || hosts[pool.Hosts[0].Addr] != 2 || hosts[pool.Hosts[1].Addr] != 2 {
		t.Fatalf("placement %v; want two 4-vCPU nodes on each 8-vCPU host, the first host first", hosts)
	}
	if _, err := p.Provision(ctx, providertest.NewRequest(providertest.NewNode("e"))); core.ErrorCode(err) != core.EQUOTA {
		t.Fatalf("a fifth node: %v; want EQUOTA (out of capacity)", err)
	}
	if err := p.Release(ctx, nodes[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pool.Hosts[0].Dir, "shoal", "nodes", "a")); !os.IsNotExist(err) {
		t.Errorf("the released node's work dir is still there (%v)", err)
	}
	n := providertest.NewNode("e")
	ref, err := p.Provision(ctx, providertest.NewRequest(n))
	if err != nil || !strings.Contains(ref, "@"+pool.Hosts[0].Addr+"/") {
		t.Fatalf("after a release: %q %v; want the freed host", ref, err)
	}
	// The binary is copied once per host, named by its checksum.
	bins, _ := filepath.Glob(filepath.Join(pool.Hosts[0].Dir, "shoal", "bin", "shoal-*"))
	if len(bins) != 1 {
		t.Errorf("binaries on host 0: %v", bins)
	}
	hs, err := p.Hosts(ctx)
	if err != nil || len(hs) != 2 || hs[0].State != catalog.HostReady || hs[0].VCPUs != 8 {
		t.Errorf("Hosts: %+v %v", hs, err)
	}
	pool.Cut(t, 1)
	hs, _ = p.Hosts(ctx)
	if hs[1].State != catalog.HostUnusable || hs[1].Reason == "" {
		t.Errorf("a cut host: %+v", hs[1])
	}
}

// GPU nodes get devices of their own: two 1-GPU nodes on a 2-GPU host get
// devices 0 and 1 (their jobs see CUDA_VISIBLE_DEVICES), a third does not
// fit; a released node's device is free again.
func TestGPUDevicesPerNode(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 1)
	h := pool.Hosts[0]
	p, err := sshpool.New(sshpool.Config{KnownHostsFile: pool.KnownHosts, Executable: shoalBin, Hosts: []sshpool.Host{
		{Address: h.Addr, User: "root", IdentityFile: pool.Key, VCPUs: 64, GPUs: 2, RemoteDir: filepath.Join(h.Dir, "shoal")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testhosts.KillUnder(filepath.Join(h.Dir, "shoal")) })
	ctx := context.Background()
	var nodes []*node.Node
	for _, id := range []string{"g1", "g2"} {
		n := providertest.NewNode(id)
		n.GPUs = 1
		ref, err := p.Provision(ctx, providertest.NewRequest(n))
		if err != nil {
			t.Fatal(err)
		}
		n.ProviderRef = ref
		nodes = append(nodes, n)
	}
	devices := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for len(devices) < 2 && time.Now().Before(deadline) {
		for _, id := range []string{"g1", "g2"} {
			for _, pid := range pidsWith("--node-id " + id) {
				cmd, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
				args := strings.Split(string(cmd), "\x00")
				for k, a := range args {
					if a == "--gpus" && k+1 < len(args) {
						devices[id] = args[k+1]
					}
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if devices["g1"] == "" || devices["g2"] == "" || devices["g1"] == devices["g2"] {
		t.Fatalf("the nodes' devices: %v; want one each, different", devices)
	}
	n := providertest.NewNode("g3")
	n.GPUs = 1
	if _, err := p.Provision(ctx, providertest.NewRequest(n)); core.ErrorCode(err) != core.EQUOTA || !strings.Contains(core.ErrorMessage(err), "GPUs") {
		t.Fatalf("a third GPU node: %v", err)
	}
	if err := p.Release(ctx, nodes[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Provision(ctx, providertest.NewRequest(n)); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}

// pidsWith lists the processes whose command line (arguments joined by
// spaces) contains s.
func pidsWith(s string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(cmd), "\x00", " "), s) {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

// A host with power commands is powered on for its first node and off
// after its last (here its network link stands for its power).
func TestPowerOnAndOff(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 1)
	h := pool.Hosts[0]
	on, off := pool.LinkCommand(0, true), pool.LinkCommand(0, false)
	p, err := sshpool.New(sshpool.Config{KnownHostsFile: pool.KnownHosts, Executable: shoalBin, Hosts: []sshpool.Host{
		{Address: h.Addr, User: "root", IdentityFile: pool.Key, VCPUs: 8, RemoteDir: filepath.Join(h.Dir, "shoal"), PowerOnCommand: on, PowerOffCommand: off}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testhosts.KillUnder(filepath.Join(h.Dir, "shoal")) })
	ctx := context.Background()
	if out, err := exec.Command("sh", "-c", off).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if hs, _ := p.Hosts(ctx); hs[0].State != catalog.HostUnusable {
		t.Fatalf("the host is off but %+v", hs[0])
	}
	for round := 0; round < 2; round++ {
		var nodes []*node.Node
		for _, id := range []string{"p1", "p2"} {
			n := providertest.NewNode(id)
			ref, err := p.Provision(ctx, providertest.NewRequest(n))
			if err != nil {
				t.Fatalf("round %d, provision %s on a powered-off host: %v", round, id, err)
			}
			n.ProviderRef = ref
			nodes = append(nodes, n)
		}
		if hs, _ := p.Hosts(ctx); hs[0].State != catalog.HostReady {
			t.Fatalf("round %d: with nodes the host is %+v", round, hs[0])
		}
		if err := p.Release(ctx, nodes[0]); err != nil {
			t.Fatal(err)
		}
		if hs, _ := p.Hosts(ctx); hs[0].State != catalog.HostReady {
			t.Fatalf("round %d: with one node left the host is %+v", round, hs[0])
		}
		if err := p.Release(ctx, nodes[1]); err != nil {
			t.Fatal(err)
		}
		if hs, _ := p.Hosts(ctx); hs[0].State != catalog.HostUnusable {
			t.Fatalf("round %d: with no node left the host is %+v; want it powered off", round, hs[0])
		}
	}
}

// gpus: auto asks each host's nvidia-smi. This machine has no GPU: the
// first host's PATH holds a stand-in nvidia-smi printing what the real
// one prints for two A100s (the parser is the one the agent uses, tested
// on real output in agent/gpu); the second host has no nvidia-smi and so
// no GPUs, which is not an error.
func TestGPUsAuto(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 2)
	withGPUs, without := pool.Hosts[0], pool.Hosts[1]
	if err := os.MkdirAll(withGPUs.BinDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	standIn := "#!/bin/sh\n# stand-in for nvidia-smi --query-gpu=... --format=csv,noheader,nounits\n" +
		"printf '0, GPU-6f4b, NVIDIA A100-SXM4-80GB, 81920, 3\\n1, GPU-9a1c, NVIDIA A100-SXM4-80GB, 81920, 0\\n'\n"
	if err := os.WriteFile(filepath.Join(withGPUs.BinDir(), "nvidia-smi"), []byte(standIn), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := sshpool.Config{KnownHostsFile: pool.KnownHosts, Executable: shoalBin}
	for _, h := range []*testhosts.Host{without, withGPUs} {
		cfg.Hosts = append(cfg.Hosts, sshpool.Host{Address: h.Addr, User: "root", IdentityFile: pool.Key, VCPUs: 64, DetectGPUs: true,
			Labels: map[string]string{"rack": "r1"}, RemoteDir: filepath.Join(h.Dir, "shoal")})
	}
	p, err := sshpool.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, h := range pool.Hosts {
			testhosts.KillUnder(filepath.Join(h.Dir, "shoal"))
		}
	})
	ctx := context.Background()
	hosts, err := p.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hosts[0].GPUs != 0 || hosts[1].GPUs != 2 || hosts[1].GPUModel != "NVIDIA A100-SXM4-80GB" || hosts[1].Labels["rack"] != "r1" {
		t.Fatalf("hosts: %+v, %+v; want none on the first, two A100s on the second", hosts[0], hosts[1])
	}
	// A 2-GPU node goes to the host that has them, though the other is
	// listed first.
	n := providertest.NewNode("auto-gpu")
	n.GPUs = 2
	ref, err := p.Provision(ctx, providertest.NewRequest(n))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ref, "@"+withGPUs.Addr+"/") {
		t.Fatalf("ref %s; want the node on %s", ref, withGPUs.Addr)
	}
}
