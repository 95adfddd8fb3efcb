package local_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/provider/local"
	"github.com/shoal-ml/shoal/provider/providertest"
)

// stub is the agent stand-in built from testdata/agentstub by TestMain.
var stub string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shoal-agentstub-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stub = filepath.Join(dir, "agentstub")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goBin, "build", "-o", stub, "./testdata/agentstub")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the agent stub:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newProvider returns a provider running the stub under a fresh data dir;
// the agents a test leaves running are released when it ends.
func newProvider(t *testing.T, cfg local.Config) *local.Provider {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Executable = stub
	if cfg.StopGrace == 0 {
		cfg.StopGrace = 5 * time.Second
	}
	p := local.New(cfg)
	t.Cleanup(func() {
		p.Close()
		cleanup := local.New(local.Config{DataDir: cfg.DataDir, Executable: stub, StopGrace: 100 * time.Millisecond})
		dirs, _ := filepath.Glob(filepath.Join(cfg.DataDir, "nodes", "*"))
		for _, dir := range dirs {
			node := &nodekind.Node{ID: filepath.Base(dir), ProviderRef: dir}
			if err := cleanup.Release(context.Background(), node); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return p
}

var harness = providertest.Harness{
	New:     func(t *testing.T) nodekind.Provider { return newProvider(t, local.Config{}) },
	Started: func(t *testing.T, p nodekind.Provider, ref string) bool { return started(ref, 10*time.Second) },
}

func TestConformance(t *testing.T) {
	providertest.Run(t, harness)
}

// started waits until the agent under ref has a pid file naming a running
// process.
func started(ref string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if pid := readPID(ref); pid > 0 && running(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStarted waits for the stub agent's "started" line in its log,
// which it prints after setting up its signals.
func waitStarted(t *testing.T, ref string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(ref, local.LogFile))
		if bytes.Contains(b, []byte("agentstub: node ")) && bytes.Contains(b, []byte(" started")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stub agent did not say it started: %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPID(ref string) int {
	b, err := os.ReadFile(filepath.Join(ref, local.PIDFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// waitGone waits until pid no longer runs.
func waitGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after %v", pid, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdline reads a process's command line, waiting for the kernel to fill
// it in: exec closes the close-on-exec pipe that ends cmd.Start before
// the new image's argument and environment areas are set up, so a
// process read at once on a loaded machine shows an empty command line
// and environment (a CI run saw exactly that).
func cmdline(t *testing.T, pid int) []string {
	t.Helper()
	b := procFile(t, pid, "cmdline")
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// procFile reads /proc/<pid>/<name>, polling for up to five seconds
// while it is empty (see cmdline).
func procFile(t *testing.T, pid int, name string) []byte {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 || time.Now().After(deadline) {
			return b
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func provision(t *testing.T, p *local.Provider, id string, delay time.Duration) *nodekind.Node {
	t.Helper()
	node := providertest.NewNode(id)
	req := providertest.NewRequest(node)
	req.Delay = delay
	ref, err := p.Provision(context.Background(), req)
	if err != nil {
		t.Fatalf("Provision(%s): %v", id, err)
	}
	node.ProviderRef = ref
	return node
}

func TestAgentProcess(t *testing.T) {
	dataDir := t.TempDir()
	p := newProvider(t, local.Config{DataDir: dataDir})
	node := provision(t, p, "n1", 0)
	dir := filepath.Join(dataDir, "nodes", "n1")
	if node.ProviderRef != dir {
		t.Fatalf("ref = %q, want the work dir %q", node.ProviderRef, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("work dir mode = %v, want 0700", fi.Mode().Perm())
	}
	pid := readPID(dir) // written before Provision returns when there is no delay
	if pid <= 0 || !running(pid) {
		t.Fatalf("pid file names %d, not a running process", pid)
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("agent process group = %d, %v; want its own (%d)", pgid, err, pid)
	}
	want := []string{stub, "agent", "--server", "http://127.0.0.1:1", "--node-id", "n1", "--work-dir", dir}
	if got := cmdline(t, pid); !slices.Equal(got, want) {
		t.Errorf("command line = %q, want %q", got, want)
	}
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err != nil || cwd != dir {
		t.Errorf("agent cwd = %q, %v; want %q", cwd, err, dir)
	}

	// The join token is in the environment only.
	const token = "join-token-n1"
	if raw := procFile(t, pid, "cmdline"); bytes.Contains(raw, []byte(token)) {
		t.Error("the join token is on the agent's command line")
	}
	env := procFile(t, pid, "environ")
	if !slices.Contains(strings.Split(string(env), "\x00"), local.JoinTokenEnv+"="+token) {
		t.Errorf("%s=%s is not in the agent's environment", local.JoinTokenEnv, token)
	}

	// Output goes to agent.log.
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, local.LogFile))
		if bytes.Contains(b, []byte("agentstub: node n1 started")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent.log = %q, missing the agent's output", b)
		}
		time.Sleep(20 * time.Millisecond)
	}

	providertest.MustRelease(t, p, node)
	waitGone(t, pid, 5*time.Second)
	if _, err := os.Stat(filepath.Join(dir, local.PIDFile)); !os.IsNotExist(err) {
		t.Errorf("pid file still there after Release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, local.LogFile)); err != nil {
		t.Errorf("agent.log is not kept after Release: %v", err)
	}
}

func TestReleaseKillsAgentIgnoringSIGTERM(t *testing.T) {
	p := newProvider(t, local.Config{StopGrace: 300 * time.Millisecond, ExtraArgs: []string{"--ignore-term"}})
	node := provision(t, p, "stubborn", 0)
	if !started(node.ProviderRef, 10*time.Second) {
		t.Fatal("agent did not start")
	}
	pid := readPID(node.ProviderRef)
	// The stub says it started once its SIGTERM disposition is in place
	// (a fixed sleep was too short on a loaded machine).
	waitStarted(t, node.ProviderRef)
	start := time.Now()
	providertest.MustRelease(t, p, node)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("Release took %v, less than the grace period: the agent ignores SIGTERM", d)
	}
	waitGone(t, pid, 5*time.Second)
	providertest.MustAlive(t, p, node, false)
}

func TestReleaseStopsTheProcessGroup(t *testing.T) {
	p := newProvider(t, local.Config{StopGrace: 2 * time.Second, ExtraArgs: []string{"--spawn-child"}})
	node := provision(t, p, "parent", 0)
	if !started(node.ProviderRef, 10*time.Second) {
		t.Fatal("agent did not start")
	}
	var child int
	deadline := time.Now().Add(5 * time.Second)
	for child == 0 {
		b, _ := os.ReadFile(filepath.Join(node.ProviderRef, "child.pid"))
		child, _ = strconv.Atoi(string(b))
		if time.Now().After(deadline) {
			t.Fatal("the agent's child did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let the child ignore SIGTERM
	providertest.MustRelease(t, p, node)
	waitGone(t, child, 5*time.Second)
}

func TestAgentExitIsNotAlive(t *testing.T) {
	p := newProvider(t, local.Config{ExtraArgs: []string{"--exit-after=100ms"}})
	node := provision(t, p, "short", 0)
	deadline := time.Now().Add(5 * time.Second)
	for {
		alive, err := p.Alive(context.Background(), node)
		if err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an agent that exited is still alive")
		}
		time.Sleep(20 * time.Millisecond)
	}
	providertest.MustRelease(t, p, node)
	// The node can be provisioned again.
	node = provision(t, p, "short", 0)
	if !started(node.ProviderRef, 10*time.Second) {
		t.Fatal("the node did not start again")
	}
}

// TestAdoptAfterRestart simulates a server restart: a second Provider over
// the same data dir finds the agents the first one started.
func TestAdoptAfterRestart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"StopsOnSIGTERM", nil},
		{"IgnoresSIGTERM", []string{"--ignore-term"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			cfg := local.Config{DataDir: dataDir, StopGrace: 300 * time.Millisecond, ExtraArgs: tc.extra}
			p1 := newProvider(t, cfg)
			node := provision(t, p1, "survivor", 0)
			if !started(node.ProviderRef, 10*time.Second) {
				t.Fatal("agent did not start")
			}
			pid := readPID(node.ProviderRef)
			p1.Close() // the server stops; its agents do not
			time.Sleep(100 * time.Millisecond)
			if !running(pid) {
				t.Fatal("Close stopped a running agent")
			}

			p2 := newProvider(t, cfg)
			providertest.MustAlive(t, p2, node, true)
			// Another node's ID with this ref is not this agent.
			impostor := providertest.NewNode("other")
			impostor.ProviderRef = node.ProviderRef
			providertest.MustAlive(t, p2, impostor, false)
			// No duplicate agent for the node.
			if _, err := p2.Provision(context.Background(), providertest.NewRequest(providertest.NewNode("survivor"))); core.ErrorCode(err) != core.ECONFLICT {
				t.Fatalf("Provision of a node whose agent runs: %v, want ECONFLICT", err)
			}
			providertest.MustRelease(t, p2, node)
			waitGone(t, pid, 5*time.Second)
			providertest.MustAlive(t, p2, node, false)
			providertest.MustRelease(t, p2, node)

			p3 := local.New(cfg)
			providertest.MustAlive(t, p3, node, false)
		})
	}
}

// TestRecycledPIDIsNotTheAgent: a pid file naming some other process (the
// agent died, its pid was reused) must not count as the agent, nor get it
// signalled.
func TestRecycledPIDIsNotTheAgent(t *testing.T) {
	dataDir := t.TempDir()
	p := newProvider(t, local.Config{DataDir: dataDir})
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal("starting sleep:", err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	dir := filepath.Join(dataDir, "nodes", "n1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, local.PIDFile), fmt.Appendf(nil, "%d\n", other.Process.Pid), 0o600); err != nil {
		t.Fatal(err)
	}
	node := providertest.NewNode("n1")
	node.ProviderRef = dir
	providertest.MustAlive(t, p, node, false)
	providertest.MustRelease(t, p, node)
	time.Sleep(100 * time.Millisecond)
	if !running(other.Process.Pid) {
		t.Fatal("Release signalled a process that is not the agent")
	}
	// A new agent may start for the node.
	node = provision(t, p, "n1", 0)
	if !started(node.ProviderRef, 10*time.Second) || readPID(dir) == other.Process.Pid {
		t.Fatal("the node's agent did not start over the stale pid file")
	}
}

func TestDelayedStart(t *testing.T) {
	p := newProvider(t, local.Config{})
	start := time.Now()
	node := provision(t, p, "slow", 300*time.Millisecond)
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("Provision with a delay took %v: it must return at once", d)
	}
	if readPID(node.ProviderRef) != 0 {
		t.Fatal("the agent started before its delay")
	}
	providertest.MustAlive(t, p, node, true) // pending counts as alive
	if !started(node.ProviderRef, 10*time.Second) {
		t.Fatal("the agent did not start after its delay")
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the agent started after %v, before its 300ms delay", d)
	}
	providertest.MustAlive(t, p, node, true)
}

func TestReleaseDuringDelay(t *testing.T) {
	p := newProvider(t, local.Config{})
	node := provision(t, p, "never", 300*time.Millisecond)
	providertest.MustRelease(t, p, node)
	providertest.MustAlive(t, p, node, false)
	time.Sleep(600 * time.Millisecond)
	assertNeverStarted(t, p, node)
}

func TestCloseCancelsDelayedStart(t *testing.T) {
	p := newProvider(t, local.Config{})
	node := provision(t, p, "never", 300*time.Millisecond)
	p.Close()
	providertest.MustAlive(t, p, node, false)
	time.Sleep(600 * time.Millisecond)
	assertNeverStarted(t, p, node)
	if _, err := p.Provision(context.Background(), providertest.NewRequest(providertest.NewNode("late"))); err == nil {
		t.Error("Provision after Close succeeded")
	}
}

func assertNeverStarted(t *testing.T, p *local.Provider, node *nodekind.Node) {
	t.Helper()
	if readPID(node.ProviderRef) != 0 {
		t.Error("the agent started")
	}
	if _, err := os.Stat(filepath.Join(node.ProviderRef, local.LogFile)); !os.IsNotExist(err) {
		t.Errorf("agent.log exists (%v): the agent started", err)
	}
	providertest.MustAlive(t, p, node, false)
}

func TestProvisionErrors(t *testing.T) {
	p := newProvider(t, local.Config{})
	for _, id := range []string{"", ".", "..", "../x", "a/b", "-rf", "a b"} {
		_, err := p.Provision(context.Background(), providertest.NewRequest(providertest.NewNode(id)))
		if core.ErrorCode(err) != core.EINVALID {
			t.Errorf("Provision(%q) = %v, want EINVALID", id, err)
		}
	}
	missing := local.New(local.Config{DataDir: t.TempDir(), Executable: filepath.Join(t.TempDir(), "no-such-shoal")})
	node := providertest.NewNode("n1")
	if _, err := missing.Provision(context.Background(), providertest.NewRequest(node)); err == nil {
		t.Fatal("Provision with a missing executable succeeded")
	}
	node.ProviderRef = filepath.Join(t.TempDir(), "nodes", "n1")
	providertest.MustAlive(t, missing, node, false)
}

func TestName(t *testing.T) {
	if got := local.New(local.Config{}).Name(); got != "local" {
		t.Fatalf("Name() = %q, want local", got)
	}
}

// On a host with GPUs each GPU node gets devices of its own (--gpus):
// two 1-GPU nodes on a 2-GPU host get 0 and 1, a third is out of
// capacity, a released node's device is free again, and a provider that
// restarts learns the devices from the running agents.
func TestGPUDevicesPerNode(t *testing.T) {
	dataDir := t.TempDir()
	p := newProvider(t, local.Config{DataDir: dataDir, GPUs: 2})
	gpuNode := func(id string) (*nodekind.Node, error) {
		n := providertest.NewNode(id)
		n.GPUs = 1
		ref, err := p.Provision(context.Background(), providertest.NewRequest(n))
		n.ProviderRef = ref
		return n, err
	}
	devicesOf := func(n *nodekind.Node) string {
		args := cmdline(t, readPID(n.ProviderRef))
		if i := slices.Index(args, "--gpus"); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	a, err := gpuNode("g1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := gpuNode("g2")
	if err != nil {
		t.Fatal(err)
	}
	if devicesOf(a) != "0" || devicesOf(b) != "1" {
		t.Fatalf("devices %q and %q; want 0 and 1", devicesOf(a), devicesOf(b))
	}
	if _, err := gpuNode("g3"); core.ErrorCode(err) != core.EQUOTA {
		t.Fatalf("a third GPU node: %v; want EQUOTA", err)
	}
	if err := p.Release(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	c, err := gpuNode("g3")
	if err != nil || devicesOf(c) != "0" {
		t.Fatalf("after a release: %v, devices %q; want device 0 again", err, devicesOf(c))
	}
	// A CPU node takes no device.
	if cpu := provision(t, p, "cpu", 0); devicesOf(cpu) != "" {
		t.Errorf("a CPU node got devices %q", devicesOf(cpu))
	}
	// After a restart the running agents keep theirs.
	again := local.New(local.Config{DataDir: dataDir, Executable: stub, GPUs: 2})
	for _, n := range []*nodekind.Node{b, c} {
		n.GPUs = 1
		if alive, err := again.Alive(context.Background(), n); !alive || err != nil {
			t.Fatalf("Alive(%s) = %v, %v", n.ID, alive, err)
		}
	}
	d := providertest.NewNode("g4")
	d.GPUs = 1
	if _, err := again.Provision(context.Background(), providertest.NewRequest(d)); core.ErrorCode(err) != core.EQUOTA {
		t.Fatalf("a GPU node after the restart, with both devices held: %v; want EQUOTA", err)
	}
}

// A node whose reference the server never recorded (a store error right
// after Provision) is still stopped by Release: a local node's reference
// is its work dir, which its ID names. Chaos found such a node running a
// job the server had already requeued elsewhere.
func TestReleaseWithoutReference(t *testing.T) {
	p := newProvider(t, local.Config{StopGrace: time.Second})
	node := provision(t, p, "unrecorded", 0)
	if !started(node.ProviderRef, 10*time.Second) {
		t.Fatal("agent did not start")
	}
	pid := readPID(node.ProviderRef)
	providertest.MustRelease(t, p, &nodekind.Node{ID: node.ID})
	waitGone(t, pid, 5*time.Second)

	// And by a provider that did not start it (after a server restart).
	other := provision(t, p, "unrecorded-adopted", 0)
	if !started(other.ProviderRef, 10*time.Second) {
		t.Fatal("agent did not start")
	}
	pid = readPID(other.ProviderRef)
	fresh := local.New(local.Config{DataDir: filepath.Dir(filepath.Dir(other.ProviderRef)), Executable: stub, StopGrace: time.Second})
	providertest.MustRelease(t, fresh, &nodekind.Node{ID: other.ID})
	waitGone(t, pid, 5*time.Second)
}
