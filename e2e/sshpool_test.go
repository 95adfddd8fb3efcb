package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testhosts"
)

// A location backed by a pool of machines reached over SSH (real OpenSSH
// servers in network namespaces): a cluster scales 0 → 3 across two hosts
// and back to 0; a host whose key is not the known one is refused.
func TestSSHPoolScalesAcrossHosts(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 2)
	cfg := fastJobsConfig + "locations:\n  - name: local\n" + pool.LocationYAML("lab", 8)
	s := startServer(t, serverOpts{Config: cfg, Host: pool.BridgeAddr})
	createCluster(t, s, "pool-cluster", "--location", "lab", "--max-instances", "3", "--idle-time-before-scale-down", "2")
	file := writeJobFile(t, "type: command\ncommand: echo on $SHOAL_NODE_ID; sleep 3\ncompute: azureml:pool-cluster\n")
	var names []string
	for range 3 {
		names = append(names, submitJob(t, s, file))
	}
	for _, n := range names {
		waitJob(t, s, n, 3*time.Minute, "Running") // the first includes provisioning: copying the agent over SSH takes a minute on a loaded 2-core machine
	}
	nodes := listNodes(t, s, "pool-cluster")
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.Address)
	}
	slices.Sort(addrs)
	// Three 4-vCPU nodes on two 8-vCPU hosts: the first host is filled,
	// then the second.
	if len(nodes) != 3 || len(slices.Compact(slices.Clone(addrs))) != 2 {
		t.Fatalf("nodes %s; want 3 across the two hosts", describeNodes(nodes))
	}
	for _, n := range names {
		waitJob(t, s, n, 60*time.Second, "Completed")
	}
	loc := runJSON[map[string]any](t, s.env, "location", "show", "-n", "lab", "-o", "json")
	if hosts, _ := loc["hosts"].([]any); len(hosts) != 2 {
		t.Errorf("location show: hosts %v", loc["hosts"])
	}
	// Back to 0: the agents stop and their work dirs go. A node still
	// provisioning (the binary copied over SSH to the second host takes
	// tens of seconds on a loaded 2-core machine) joins, idles and goes
	// too, so the wait allows for its copy.
	waitFor(t, 2*time.Minute, "the cluster to scale back to 0", func() (bool, string) {
		nodes := listNodes(t, s, "pool-cluster")
		return len(nodes) == 0, describeNodes(nodes)
	})
	for _, h := range pool.Hosts {
		for _, p := range allProcs() {
			if strings.Contains(p.cmdline, h.Dir) && strings.Contains(p.cmdline, " agent ") {
				t.Errorf("an agent still runs on %s: %s", h.Addr, p)
			}
		}
	}

	// A two-node PyTorch-style job on 8-vCPU nodes: one per host, and
	// each rank reaches MASTER_ADDR.
	createCluster(t, s, "wide", "--location", "lab", "--size", "Standard_D8s_v3", "--max-instances", "2", "--idle-time-before-scale-down", "60")
	two := submitJob(t, s, writeJobFile(t, `type: command
command: python3 -c "import os,socket; a=os.environ['MASTER_ADDR']; socket.create_connection((a, 22), 5).close(); print('rank', os.environ['NODE_RANK'], 'reached', a)"
compute: azureml:wide
resources:
  instance_count: 2
distribution:
  type: pytorch
`))
	waitJob(t, s, two, 60*time.Second, "Completed")
	log := jobLog(t, s, two, "--rank", "0") + jobLog(t, s, two, "--rank", "1")
	if strings.Count(log, "reached "+pool.Hosts[0].Addr)+strings.Count(log, "reached "+pool.Hosts[1].Addr) != 2 {
		t.Errorf("the ranks did not both reach MASTER_ADDR:\n%s", log)
	}
	wide := listNodes(t, s, "wide")
	if len(wide) != 2 || wide[0].Address == wide[1].Address {
		t.Fatalf("the two ranks' nodes: %s; want one per host", describeNodes(wide))
	}

	// A host cut off mid-job: its node is lost after the lease (3 s + 3 s)
	// and the job runs again on the other host.
	long := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo attempt $SHOAL_ATTEMPT on $SHOAL_NODE_ID; sleep 4\ncompute: azureml:wide\n"))
	waitJob(t, s, long, 30*time.Second, "Running")
	a := currentAttempt(t, s, long)
	var victim string
	for _, n := range listNodes(t, s, "wide") {
		if n.ID == a.Ranks[0].NodeID {
			victim = n.Address
		}
	}
	for i, h := range pool.Hosts {
		if h.Addr == victim {
			pool.Cut(t, i)
		}
	}
	j := waitJob(t, s, long, 60*time.Second, "Completed")
	if j.AttemptCount != 2 || j.InfraRequeues != 1 {
		t.Errorf("%s; want a second attempt after the host was lost", j)
	}
	if atts := listAttempts(t, s, long); len(atts) != 2 || atts[0].Status != "Lost" || atts[1].Ranks[0].NodeID == atts[0].Ranks[0].NodeID {
		t.Errorf("attempts %+v", atts)
	}
}

// A host whose key does not match known_hosts is refused: the node fails
// to provision and says why.
func TestSSHPoolRefusesUnknownHostKey(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 1)
	// known_hosts holds another key for the host.
	other := testhosts.New(t, 1)
	wrong := strings.Replace(readFile(t, other.KnownHosts), other.Hosts[0].Addr, pool.Hosts[0].Addr, 1)
	writeFile(t, pool.KnownHosts, wrong)
	cfg := fastJobsConfig + "locations:\n  - name: local\n" + pool.LocationYAML("lab", 8)
	s := startServer(t, serverOpts{Config: cfg, Host: pool.BridgeAddr})
	createCluster(t, s, "keyed", "--location", "lab", "--max-instances", "1")
	submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo hi\ncompute: azureml:keyed\n"))
	waitFor(t, 30*time.Second, "the refusal to be an event", func() (bool, string) {
		evs := eventLines(events(t, s, "keyed"))
		return strings.Contains(evs, "host key does not match known_hosts"), evs
	})
	if left := procsWithEnv("SHOAL_NODE_ID=keyed-n1"); len(left) != 0 {
		t.Errorf("an agent started despite the refused key: %v", left)
	}
}

// GPUs on a pool host (gpus: auto): the location reports what nvidia-smi
// lists, a GPU size schedules there, the job sees only its node's device,
// and the job's events carry utilisation samples. This machine has no
// GPU: the host's PATH holds a stand-in nvidia-smi that prints what the
// real one prints for two A100s (its parser is tested on real output in
// agent/gpu; scripts/gpu-check runs the real thing on a GPU host).
func TestSSHPoolGPUs(t *testing.T) {
	t.Parallel()
	pool := testhosts.New(t, 1)
	h := pool.Hosts[0]
	if err := os.MkdirAll(h.BinDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(h.BinDir(), "nvidia-smi"), "#!/bin/sh\n# stand-in for nvidia-smi --query-gpu=index,uuid,name,memory.total,utilization.gpu --format=csv,noheader,nounits\n"+
		"printf '0, GPU-6f4b, NVIDIA A100-SXM4-80GB, 81920, 87\\n1, GPU-9a1c, NVIDIA A100-SXM4-80GB, 81920, 12\\n'\n")
	if err := os.Chmod(filepath.Join(h.BinDir(), "nvidia-smi"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fastJobsConfig + "gpu_sample_interval: 1s\nlocations:\n  - name: local\n" +
		fmt.Sprintf("  - name: gpulab\n    provider: ssh\n    known_hosts: %s\n    hosts:\n      - {address: %s, user: root, identity_file: %s, vcpus: 16, memory_gb: 128, gpus: auto, labels: {rack: r7}, remote_dir: %s}\n",
			pool.KnownHosts, h.Addr, pool.Key, filepath.Join(h.Dir, "shoal"))
	// Over HTTPS with a private CA: the agent on the host gets the CA on
	// its standard input and verifies the server.
	s := startServer(t, serverOpts{Config: cfg, Host: pool.BridgeAddr, Args: []string{"--tls"}, TLS: true})
	loc := runJSON[map[string]any](t, s.env, "location", "show", "-n", "gpulab", "-o", "json")
	hosts, _ := loc["hosts"].([]any)
	if len(hosts) != 1 {
		t.Fatalf("location show: hosts %v", loc["hosts"])
	}
	host := hosts[0].(map[string]any)
	if host["gpus"] != float64(2) || host["gpu_model"] != "NVIDIA A100-SXM4-80GB" || host["labels"].(map[string]any)["rack"] != "r7" {
		t.Errorf("the host as location show reports it: %v", host)
	}
	createCluster(t, s, "gpu-cluster", "--location", "gpulab", "--size", "Standard_NC6s_v3", "--max-instances", "1")
	name := submitJob(t, s, writeJobFile(t, "type: command\ncommand: echo devices $CUDA_VISIBLE_DEVICES; sleep 4\ncompute: azureml:gpu-cluster\n"))
	waitJob(t, s, name, 3*time.Minute, "Completed") // includes provisioning the host (the agent copied over SSH)
	if log := jobLog(t, s, name); !strings.Contains(log, "devices 0\n") {
		t.Errorf("the job's devices: %q; want device 0 only", log)
	}
	evs := runJSON[[]map[string]any](t, s.env, "job", "events", "-n", name, "-o", "json")
	var samples []string
	for _, e := range evs {
		if e["kind"] == "gpu_utilization" {
			samples = append(samples, jsonStr(e["reason"]))
		}
	}
	if len(samples) == 0 || !strings.Contains(samples[0], "GPU 0 NVIDIA A100-SXM4-80GB 87%") || strings.Contains(samples[0], "GPU 1") {
		t.Errorf("GPU samples in the job's events: %q; want GPU 0 at 87%% and not the other node's GPU 1", samples)
	}
}
