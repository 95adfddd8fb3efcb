package rank

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// fakeAgentServer answers the agent API calls a rank makes: it records
// the rank reports and serves artifacts.
type fakeAgentServer struct {
	*httptest.Server
	mu        sync.Mutex
	reports   []node.RankReport
	artifacts map[string][]byte
}

func newFakeAgentServer(t *testing.T) *fakeAgentServer {
	f := &fakeAgentServer{artifacts: map[string][]byte{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/status"):
			var rep node.RankReport
			if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			f.mu.Lock()
			f.reports = append(f.reports, rep)
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		case strings.HasPrefix(r.URL.Path, "/agent/v1/artifacts/"):
			f.mu.Lock()
			b, ok := f.artifacts[strings.TrimPrefix(r.URL.Path, "/agent/v1/artifacts/")]
			f.mu.Unlock()
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Write(b)
		default:
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// final is the rank's last report (its result).
func (f *fakeAgentServer) final(t *testing.T) node.RankReport {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.reports) - 1; i >= 0; i-- {
		if s := f.reports[i].State; s != node.RankPreparing && s != node.RankRunning && s != node.RankFinalizing {
			return f.reports[i]
		}
	}
	t.Fatalf("no final report among %+v", f.reports)
	return node.RankReport{}
}

// containerAgent is an agent on the shared podman service, its work run
// as accounts of their own (the agent is root).
func containerAgent(t *testing.T, env *testctr.Env, srv *fakeAgentServer, nodeID string) *testAgent {
	t.Helper()
	accounts, err := runas.New()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a := newTestAgent(t, Node{ServerURL: srv.URL, NodeID: nodeID, Accounts: accounts, Log: log})
	a.Ctr = ctrhost.Open(context.Background(), ctrhost.Config{NodeID: nodeID, WorkDir: a.WorkDir, ContainerHost: env.Host, Clock: a.Clock}, log)
	if info := a.Ctr.Info(); !info.Usable() {
		t.Fatalf("runtime info %+v", info)
	}
	t.Cleanup(a.Ctr.Close)
	return a
}

// runRank runs task on a to its end and returns its log.
func runRank(t *testing.T, a *testAgent, task *node.AgentTask, during func(r *Rank)) string {
	t.Helper()
	r := a.newRank(task)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(context.Background())
	}()
	if during != nil {
		during(r)
	}
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		t.Fatal("the rank did not end")
	}
	b, _ := os.ReadFile(r.logPath())
	return string(b)
}

// noContainersLeft fails when a container of node is left.
func noContainersLeft(t *testing.T, env *testctr.Env, node string) {
	t.Helper()
	e, err := container.Open(context.Background(), container.Config{Host: env.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	left, err := e.List(context.Background(), map[string]string{ctrhost.LabelNode: node})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("containers left behind: %+v", left)
	}
}

func task(id, image string) *node.AgentTask {
	return &node.AgentTask{RankRef: node.RankRef{AttemptID: id}, JobName: "job-" + id, Workspace: "ws-ctr", Attempt: 1,
		NodeCount: 1, ProcessesPerNode: 1, KillGrace: 2 * time.Second, Outputs: []string{"out"},
		Environment: &asset.EnvironmentSpec{Image: image, Source: "inline"},
		Container:   &node.ContainerTask{Mode: catalog.ContainersOptional, VCPUs: 1, MemoryGB: 0.5}}
}

// A rank with an image runs in a container of it pulled from the
// registry: as its run-as account (not root), in the code folder, with
// Azure's variables, its outputs folder mounted where the host run has
// it, nothing of the host's other files, its exit code and log kept, and
// its container removed.
func TestContainerRankRunsInItsImage(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-run")
	hostOnly := filepath.Join(t.TempDir(), "host-only")
	os.WriteFile(hostOnly, []byte("x"), 0o644)
	tk := task("att-ctr-run", env.Registry.Addr+"/"+testctr.PushedBase)
	tk.Command = `echo "uid=$(id -u) gid=$(id -g) pwd=$(pwd) run=$AZUREML_RUN_ID"; ` +
		`python3 -c 'print("python in the image")'; test -e ` + hostOnly + ` && echo HOST-FILE-VISIBLE; ` +
		`echo made > "$AZUREML_OUTPUT_out/f.txt"; echo kept > ./outputs/c.txt; exit 3`
	log := runRank(t, a, tk, nil)
	rep := srv.final(t)
	if rep.State != node.RankFailed || rep.ExitCode == nil || *rep.ExitCode != 3 {
		t.Fatalf("final report %+v, want Failed with exit code 3; log:\n%s", rep, log)
	}
	acct, err := a.Accounts.For(files.RunAsOf(tk))
	if err != nil {
		t.Fatal(err)
	}
	dir := AttemptDir(a.RunDir, tk)
	want := fmt.Sprintf("uid=%d gid=%d pwd=%s run=job-att-ctr-run", acct.UID, acct.GID, filepath.Join(dir, "code"))
	if acct.UID == 0 || !strings.Contains(log, want) || !strings.Contains(log, "python in the image") {
		t.Errorf("log lacks %q (or runs as root):\n%s", want, log)
	}
	if strings.Contains(log, "HOST-FILE-VISIBLE") {
		t.Errorf("the container sees a host file outside its mounts:\n%s", log)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "outputs", "out", "f.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the output written in the container: %q, %v", b, err)
	}
	// ./outputs is writable by the container's account and kept as the
	// job's artifacts.
	if b, err := os.ReadFile(filepath.Join(dir, "outputs", "artifacts", "outputs", "c.txt")); err != nil || string(b) != "kept\n" || !rep.Artifacts {
		t.Errorf("./outputs written in the container: %q, %v (artifacts reported: %v)", b, err, rep.Artifacts)
	}
	noContainersLeft(t, env, "ctr-run")
}

// Cancelling a rank that runs in a container stops the container (the
// grace, then SIGKILL) and removes it.
func TestContainerRankCancelStopsAndRemoves(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-cancel")
	tk := task("att-ctr-cancel", env.Registry.Addr+"/"+testctr.PushedBase)
	tk.Command = "echo started; sleep 300"
	began := time.Now()
	log := runRank(t, a, tk, func(r *Rank) {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r.mu.Lock()
			started := r.run_ != nil
			r.mu.Unlock()
			running := !a.ended(tk.RankRef)
			if started || !running || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		r.Stop("canceled")
	})
	rep := srv.final(t)
	if rep.State != node.RankCanceled {
		t.Fatalf("final report %+v, want Canceled; log:\n%s", rep, log)
	}
	if took := time.Since(began); took > 2*time.Minute {
		t.Errorf("cancel took %s", took)
	}
	noContainersLeft(t, env, "ctr-cancel")
}

// An image the registry lacks fails the rank with RankImageFailed and the
// registry's words: the job's fault, not the node's.
func TestContainerRankMissingImageFails(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-missing")
	tk := task("att-ctr-missing", env.Registry.Addr+"/shoal-test/absent:1")
	tk.Command = "true"
	log := runRank(t, a, tk, nil)
	rep := srv.final(t)
	if rep.State != node.RankFailed || rep.Failure != node.RankImageFailed || !strings.Contains(strings.ToLower(rep.Reason), "unknown") {
		t.Fatalf("final report %+v, want Failed/image_failed with the registry's words; log:\n%s", rep, log)
	}
	if !strings.Contains(log, "preparing the image failed") {
		t.Errorf("log:\n%s", log)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.reports) == 0 || srv.reports[0].State != node.RankPreparing || !strings.HasPrefix(srv.reports[0].Reason, "pulling ") {
		t.Errorf("reports %+v: want a Preparing report (pulling …) first", srv.reports)
	}
}

// tarGzFiles is a tar.gz of files (name → content).
func tarGzFiles(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// A build context is built on the node, tagged by its hash, and a second
// job with the same context uses the image without building again, its
// log saying so.
func TestContainerRankBuildsOnce(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-build")
	marker := fmt.Sprintf("built-%d", time.Now().UnixNano())
	srv.artifacts["ctx-1"] = tarGzFiles(t, map[string]string{
		"docker/Dockerfile": "FROM " + env.BaseImage + "\nRUN echo " + marker + " > /built.txt && echo BUILD-STEP-RAN\n",
	})
	var logs []string
	for i := range 2 {
		tk := task(fmt.Sprintf("att-ctr-build-%d", i), "")
		tk.Environment = &asset.EnvironmentSpec{Build: &asset.EnvironmentBuild{Path: "ctx-1", DockerfilePath: "docker/Dockerfile"}, Source: "inline"}
		tk.Command = "cat /built.txt"
		log := runRank(t, a, tk, nil)
		if rep := srv.final(t); rep.State != node.RankCompleted || !strings.Contains(log, marker) {
			t.Fatalf("run %d: final report %+v; log:\n%s", i, rep, log)
		}
		logs = append(logs, log)
	}
	if strings.Contains(logs[0], "built from this context before") || !strings.Contains(logs[1], "built from this context before: used as it is") {
		t.Errorf("only the second run's log should say the image was built before:\n--- first\n%s\n--- second\n%s", logs[0], logs[1])
	}
	if !strings.Contains(logs[0], "BUILD-STEP-RAN") || strings.Contains(logs[1], "BUILD-STEP-RAN") {
		t.Errorf("the build ran %v times (want once, the first):\n--- first\n%s\n--- second\n%s",
			[]bool{strings.Contains(logs[0], "BUILD-STEP-RAN"), strings.Contains(logs[1], "BUILD-STEP-RAN")}, logs[0], logs[1])
	}
	noContainersLeft(t, env, "ctr-build")
}

// A conda file on an image without conda or mamba is refused with that
// reason (RankImageFailed), before anything is built.
func TestContainerRankCondaWithoutConda(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-conda")
	tk := task("att-ctr-conda", env.Registry.Addr+"/"+testctr.PushedBase)
	tk.Environment.CondaFile = "name: t\ndependencies:\n  - python=3.11\n"
	tk.Command = "true"
	log := runRank(t, a, tk, nil)
	rep := srv.final(t)
	if rep.State != node.RankFailed || rep.Failure != node.RankImageFailed || !strings.Contains(rep.Reason, "neither conda nor mamba") {
		t.Fatalf("final report %+v; log:\n%s", rep, log)
	}
	noContainersLeft(t, env, "ctr-conda")
}

// A location whose mode is off runs no image: a task that reaches the
// node anyway fails with the reason, without touching an engine.
func TestContainerRankModeOffRefused(t *testing.T) {
	tk := task("att-off", "example.com/x:1")
	tk.Container.Mode = catalog.ContainersOff
	if ok, err := wantsContainer(tk, ""); ok || err == nil || !strings.Contains(err.Error(), "runs no containers") {
		t.Fatalf("wantsContainer = %v, %v", ok, err)
	}
	tk.Environment = nil
	if ok, err := wantsContainer(tk, ""); ok || err != nil {
		t.Fatalf("no environment: %v, %v", ok, err)
	}
}

// An agent in a container of its node's image (a kubernetes pod) runs
// ranks of that image as processes, and refuses any other image or a
// build with a reason naming both.
func TestNodeImageRunsItsOwnImageOnly(t *testing.T) {
	tk := task("att-nodeimage", "example.com/x:1")
	if ok, err := wantsContainer(tk, "example.com/x:1"); ok || err != nil {
		t.Fatalf("same image: %v, %v; want a process", ok, err)
	}
	ok, err := wantsContainer(tk, "example.com/y:2")
	if ok || err == nil || !strings.Contains(err.Error(), "example.com/x:1") || !strings.Contains(err.Error(), "example.com/y:2") {
		t.Fatalf("other image: %v, %v", ok, err)
	}
	tk.Environment = &asset.EnvironmentSpec{Build: &asset.EnvironmentBuild{Path: "ctx"}}
	if ok, err := wantsContainer(tk, "example.com/x:1"); ok || err == nil {
		t.Fatalf("a build: %v, %v", ok, err)
	}
	tk.Environment = nil
	if ok, err := wantsContainer(tk, "example.com/x:1"); ok || err != nil {
		t.Fatalf("no environment: %v, %v", ok, err)
	}
}

// A node that builds an image for a workspace with a registry names it
// there and pushes it, so that other nodes pull it rather than build.
func TestContainerRankBuildPushesToWorkspaceRegistry(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-push")
	marker := fmt.Sprintf("pushed-%d", time.Now().UnixNano())
	srv.artifacts["ctx-push"] = tarGzFiles(t, map[string]string{"Dockerfile": "FROM " + env.BaseImage + "\nRUN echo " + marker + " > /m.txt\n"})
	tk := task("att-ctr-push", "")
	tk.Environment = &asset.EnvironmentSpec{Build: &asset.EnvironmentBuild{Path: "ctx-push"}, Source: "inline"}
	tk.Container.PushTo = env.Registry.Addr + "/ws-push"
	tk.Container.Registries = []compute.RegistryCredential{{Registry: env.Registry.Addr, Insecure: true}}
	tk.Command = "cat /m.txt"
	log := runRank(t, a, tk, nil)
	if rep := srv.final(t); rep.State != node.RankCompleted || !strings.Contains(log, marker) {
		t.Fatalf("final report %+v; log:\n%s", rep, log)
	}
	resp, err := http.Get("http://" + env.Registry.Addr + "/v2/_catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "ws-push/shoal-build/") {
		t.Errorf("the registry's catalog %s lacks the pushed build; log:\n%s", body, log)
	}
}

// A rank on a subnet's internal network finds the server on its own
// loopback, as a rank on the host's network does (AZUREML_DEV_URL_MFE):
// the agent listens there in the container's namespace before the
// command starts, and relays to the server. The host's other loopback
// ports stay out of reach.
func TestContainerRankOnASubnetReachesTheServer(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	subnet := node.SubnetNetwork("ws-ctr", &compute.ComputeSpec{NetworkSettings: &compute.NetworkSettings{VnetName: "v", Subnet: "s"},
		EnableNodePublicIP: new(bool)})
	// Once the agent's engine is closed (cleanups run last first): the
	// subnet's network is still there, for the containers of other
	// nodes on the host (other stores', whose use of it this engine does
	// not see: container.Networker). Then the test removes it.
	t.Cleanup(func() {
		ctx := context.Background()
		if err := env.PodmanCLI(ctx, "network", "exists", subnet.Name); err != nil {
			t.Errorf("the subnet's network %s is gone once the node closed: %v", subnet.Name, err)
		}
		_ = env.PodmanCLI(ctx, "network", "rm", subnet.Name)
	})
	a := containerAgent(t, env, srv, "ctr-subnet")
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tk := task("att-ctr-subnet", env.Registry.Addr+"/"+testctr.PushedBase)
	tk.Container.Network = subnet
	tk.Command = `python3 - <<'PY'
import os, socket, urllib.request, urllib.error
try:
    urllib.request.urlopen(os.environ["AZUREML_DEV_URL_MFE"] + "healthz", timeout=10)
    print("server answered")
except urllib.error.HTTPError as e:
    print("server answered", e.code)
except OSError as e:
    print("server unreachable", e)
try:
    socket.create_connection(("127.0.0.1", ` + strconv.Itoa(other.Addr().(*net.TCPAddr).Port) + `), timeout=3).close()
    print("other port reached")
except OSError:
    print("other port unreachable")
PY`
	log := runRank(t, a, tk, nil)
	if !strings.Contains(log, "server answered") || !strings.Contains(log, "other port unreachable") {
		t.Fatalf("want the server reached and the host's other port not:\n%s", log)
	}
	noContainersLeft(t, env, "ctr-subnet")
}

// A single-node rank in a container without a subnet has a network
// namespace of its own, not the host's: the host's loopback ports (the
// server's application proxy, another user's listener) are out of its
// reach, while the server, which the agent reaches on the loopback,
// answers it on its own loopback (AZUREML_DEV_URL_MFE), as on the host.
// Its two processes share that namespace: the second reaches what the
// first listens on at 127.0.0.1 (MASTER_ADDR on a single node).
func TestContainerRankWithoutASubnetKeepsOffTheHostsLoopback(t *testing.T) {
	env := testctr.Shared(t)
	srv := newFakeAgentServer(t)
	a := containerAgent(t, env, srv, "ctr-ownnet")
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tk := task("att-ctr-ownnet", env.Registry.Addr+"/"+testctr.PushedBase)
	tk.ProcessesPerNode = 2
	tk.Command = `python3 - <<'PY'
import os, socket, time, urllib.request, urllib.error
rank = os.environ.get("LOCAL_RANK", os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "?"))
if rank == "0":
    ln = socket.socket()
    ln.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ln.bind(("127.0.0.1", 29555)); ln.listen(1)
    c, _ = ln.accept(); c.sendall(b"sibling"); c.close()
    try:
        urllib.request.urlopen(os.environ["AZUREML_DEV_URL_MFE"] + "healthz", timeout=10)
        print("server answered")
    except urllib.error.HTTPError as e:
        print("server answered", e.code)
    except OSError as e:
        print("server unreachable", e)
    try:
        socket.create_connection(("127.0.0.1", ` + strconv.Itoa(other.Addr().(*net.TCPAddr).Port) + `), timeout=3).close()
        print("host port reached")
    except OSError:
        print("host port unreachable")
else:
    for i in range(400):
        try:
            s = socket.create_connection(("127.0.0.1", 29555), timeout=3)
            print("sibling says", s.recv(16).decode()); break
        except OSError:
            time.sleep(0.05)
PY`
	log := runRank(t, a, tk, nil)
	if !strings.Contains(log, "server answered") || !strings.Contains(log, "host port unreachable") || !strings.Contains(log, "sibling says sibling") {
		t.Fatalf("want the server reached, the host's loopback not, and the sibling process:\n%s", log)
	}
	noContainersLeft(t, env, "ctr-ownnet")
}
