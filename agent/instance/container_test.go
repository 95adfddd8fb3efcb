package instance

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dockerclient "github.com/docker/docker/client"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/portowner"
	"github.com/shoal-ml/shoal/internal/procmark"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// waitRunning waits for the instance to report running (or fails with
// its setup error).
func waitRunning(t *testing.T, a *testAgent) *node.InstanceReport {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		a.mu.Lock()
		rt := a.instance
		a.mu.Unlock()
		r := rt.Report(context.Background())
		switch r.Phase {
		case node.InstancePhaseRunning:
			return r
		case node.InstancePhaseSetupFailed:
			b, _ := os.ReadFile(filepath.Join(rt.dir, setupLogFile))
			t.Fatalf("setup failed: %s\n%s", r.SetupError, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("the instance did not come up")
	return nil
}

// boxExec runs a command in the instance's container as azureuser.
func boxExec(t *testing.T, rt *Runtime, argv ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code, err := rt.box.ex.ExecWait(context.Background(), rt.box.id, container.ExecOptions{Command: argv, User: boxUser, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), code
}

// An instance on a node with a runtime is one container of the instance
// image: its size's limits, the setup script and Jupyter inside as
// azureuser, who may sudo to a root that is not the host's; Jupyter
// answers on the loopback of the container's own network namespace and
// passes the app proxy's owner check there (the mark, and the uid
// azureuser maps to); stop removes the container and
// start brings the same home back, without sudo when root access is off.
func TestInstanceRunsInAContainer(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	image := testctr.InstanceImage(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ci-node-1")
	task := &node.InstanceTask{Workspace: "ws", Name: "ci-box", RunAs: "ci-owner", NotebookToken: "nbtok", JupyterBaseURL: "/ci-box/",
		CreationScript: &compute.SetupScript{Command: "id -u > made-by-setup; sudo -n id -u >> made-by-setup; echo $HOME >> made-by-setup"},
		Container:      &node.InstanceContainer{Image: image, RootAccess: true, VCPUs: 1, MemoryGB: 0.5}}
	a.instanceTask(context.Background(), task)
	rep := waitRunning(t, a)
	rt := a.instance
	t.Cleanup(rt.Close)
	if rt.ContainerID() == "" {
		t.Fatal("no container id")
	}

	cli, err := dockerclient.NewClientWithOpts(dockerclient.WithHost(env.Host), dockerclient.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ins, err := cli.ContainerInspect(context.Background(), rt.ContainerID())
	if err != nil {
		t.Fatal(err)
	}
	if ins.HostConfig.NanoCPUs != 1e9 || ins.HostConfig.Memory != 512<<20 {
		t.Errorf("limits: %d nano CPUs, %d bytes; want 1e9 and 512 MiB", ins.HostConfig.NanoCPUs, ins.HostConfig.Memory)
	}
	if ins.Config.Labels[labelInstance] != "ws/ci-box" {
		t.Errorf("labels %v", ins.Config.Labels)
	}

	made, err := os.ReadFile(filepath.Join(rt.home, "made-by-setup"))
	if err != nil {
		t.Fatalf("the creation script's file: %v", err)
	}
	if got := strings.Fields(string(made)); strings.Join(got, " ") != "1000 0 /home/azureuser" {
		t.Errorf("setup script saw %q, want azureuser (1000), sudo to 0, home /home/azureuser", got)
	}
	if rt.box.hostUID == 0 || rt.box.hostUID == 1000 {
		t.Errorf("azureuser is host uid %d: not in a user namespace of its own", rt.box.hostUID)
	}
	if out, code := boxExec(t, rt, "sudo", "-n", "id", "-u"); out != "0" || code != 0 {
		t.Errorf("sudo inside: %q exit %d", out, code)
	}

	// Jupyter answers on the loopback, its listener owned by the
	// instance as the proxy checks it.
	var port int
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := rt.Report(context.Background())
		if len(r.Apps) == 1 && r.Apps[0].Ready {
			port, _ = strconv.Atoi(strings.TrimPrefix(r.Apps[0].Addr, "127.0.0.1:"))
			if r.Apps[0].UID == nil || *r.Apps[0].UID != rt.box.hostUID {
				t.Errorf("Jupyter reported as uid %v, want %d", r.Apps[0].UID, rt.box.hostUID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jupyter not ready: %+v (first report %+v)", r.Apps, rep.Apps)
		}
		time.Sleep(300 * time.Millisecond)
	}
	// In the container's own network namespace, as the proxy reaches
	// it: the host's loopback does not have it.
	if r := rt.Report(context.Background()); r.Apps[0].NetNSPID != rt.box.pid {
		t.Errorf("Jupyter's report names namespace %d, want the container's first process %d", r.Apps[0].NetNSPID, rt.box.pid)
	}
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/ci-box/api/status", nil)
	req.Header.Set("Authorization", "token nbtok")
	resp, err := rt.box.httpClient(10 * time.Second).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("Jupyter's status: %d", resp.StatusCode)
	}
	mark := procmark.Node(a.NodeID, a.WorkDir)
	owned := func(pid int) bool { return procmark.Carries(pid, mark...) && procUIDOrMinus(pid) == rt.box.hostUID }
	if err := portowner.CheckIn(rt.box.pid, port, owned); err != nil {
		t.Errorf("the proxy's owner check refuses the instance's Jupyter: %v", err)
	}
	// Another node's mark (another instance) is refused.
	other := procmark.Node("ci-node-2", a.WorkDir)
	if err := portowner.CheckIn(rt.box.pid, port, func(pid int) bool { return procmark.Carries(pid, other...) }); err == nil {
		t.Error("the owner check accepts the instance's Jupyter as another node's")
	}
	// The idle sample reads the container's CPU.
	rt.mu.Lock()
	rt.activity.at = time.Time{}
	rt.mu.Unlock()
	rt.sample(context.Background())
	rt.mu.Lock()
	ticks := rt.activity.cpuTicks
	rt.mu.Unlock()
	if ticks == 0 {
		t.Error("the container's CPU time reads 0")
	}

	// Stop: the container goes, the home stays.
	id := rt.ContainerID()
	rt.Close()
	if _, err := cli.ContainerInspect(context.Background(), id); err == nil {
		t.Error("the container is still there after stop")
	}
	// Start again, root access off: the same home, no sudo.
	a.mu.Lock()
	a.instance = nil
	a.mu.Unlock()
	task2 := *task
	task2.CreationScript = nil
	task2.Container = &node.InstanceContainer{Image: image, RootAccess: false, VCPUs: 1, MemoryGB: 0.5}
	a.instanceTask(context.Background(), &task2)
	waitRunning(t, a)
	rt2 := a.instance
	t.Cleanup(rt2.Close)
	if out, _ := boxExec(t, rt2, "head", "-1", "/home/azureuser/made-by-setup"); out != "1000" {
		t.Errorf("the home after stop and start: %q", out)
	}
	if _, code := boxExec(t, rt2, "sudo", "-n", "true"); code == 0 {
		t.Error("azureuser may sudo with enable_root_access false")
	}
}

func procUIDOrMinus(pid int) int {
	n, err := procUID(pid)
	if err != nil {
		return -1
	}
	return n
}
