package instance

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/portowner"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// imageAppRuntime is an instance runtime of a container agent, its home
// made and owned by the instance user's account.
func imageAppRuntime(t *testing.T, a *testAgent) *Runtime {
	t.Helper()
	acct, err := a.Accounts.For("user:ann")
	if err != nil {
		t.Fatal(err)
	}
	rt := &Runtime{n: a.Node, dir: a.WorkDir, home: filepath.Join(a.WorkDir, "home"), account: acct}
	if err := acct.MkdirOwned(rt.home); err != nil {
		t.Fatal(err)
	}
	return rt
}

// waitApp waits until the application's report satisfies ok.
func waitApp(t *testing.T, ias *imageApps, what string, ok func(compute.InstanceAppReport) bool) compute.InstanceAppReport {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var last compute.InstanceAppReport
	for time.Now().Before(deadline) {
		last = ias.reports()[0]
		if ok(last) {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the application never got %s: last report %+v", what, last)
	return last
}

func freeTestPort(t *testing.T) int {
	t.Helper()
	p, err := anyFreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// An application from an image (python3 -m http.server in the test base
// image, pulled from the registry) runs in a container of its own: it
// answers on its port, sees the home's folder it mounts, its listener is
// its container's to the proxy's rule (and a host process on another port
// is not), it is started again in a new container when it exits, and
// stopping the instance leaves no container behind.
func TestImageAppRunsRestartsAndStops(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	a := containerAgent(t, env, newFakeAgentServer(t), "ci-imgapp")
	rt := imageAppRuntime(t, a)
	if err := os.MkdirAll(filepath.Join(rt.home, "cloudfiles"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(rt.home, "cloudfiles", "hello.txt"), []byte("from the home\n"), 0o644)
	port := freeTestPort(t)
	task := &node.InstanceTask{Workspace: "ws", Name: "ci", Apps: []*compute.CustomApplication{{
		Name: "web", Type: "docker", Image: &compute.CustomAppImage{Type: "docker", Reference: env.Registry.Addr + "/" + testctr.PushedBase},
		Command:              "cd /data && echo started $GREETING && exec python3 -m http.server " + strconv.Itoa(port) + " --bind 127.0.0.1",
		Endpoints:            []*compute.AppEndpoint{{Target: port, Published: port}},
		EnvironmentVariables: map[string]string{"GREETING": "hi"},
		BindMounts:           []*compute.BindMount{{Source: "/home/azureuser/cloudfiles", Target: "/data", ReadOnly: true}},
	}}}
	logDir := t.TempDir()
	ias := rt.startImageApps(task, logDir, nil)
	stopped := false
	defer func() {
		if !stopped {
			ias.stop()
		}
	}()
	first := waitApp(t, ias, "ready", func(r compute.InstanceAppReport) bool { return r.Ready })
	if first.ContainerID == "" || first.ContainerPID <= 1 || first.Addr != "127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("report %+v lacks the container, its process or the address", first)
	}
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "from the home\n" {
		t.Errorf("the mounted home file through the app: %q", body)
	}
	// The proxy's rule: the listener is the container's...
	if err := portowner.Check(port, func(pid int) bool { return portowner.InContainer(pid, first.ContainerID, first.ContainerPID) }); err != nil {
		t.Errorf("the app's own listener is refused: %v", err)
	}
	// ...and another process's listener, told the same container, is not.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	other := l.Addr().(*net.TCPAddr).Port
	if err := portowner.Check(other, func(pid int) bool { return portowner.InContainer(pid, first.ContainerID, first.ContainerPID) }); err == nil {
		t.Error("a host process's listener counts as the app container's")
	}
	if b, _ := os.ReadFile(filepath.Join(logDir, "web.log")); !strings.Contains(string(b), "started hi") {
		t.Errorf("the app's log: %q", b)
	}
	// It exits: a new container takes over.
	if err := syscall.Kill(first.ContainerPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := waitApp(t, ias, "started again", func(r compute.InstanceAppReport) bool {
		return r.Ready && r.ContainerID != "" && r.ContainerID != first.ContainerID
	})
	ias.apps[0].mu.Lock()
	restarts := ias.apps[0].restarts
	ias.apps[0].mu.Unlock()
	if restarts < 1 {
		t.Errorf("the restart is not counted: %+v", second)
	}
	ias.stop()
	stopped = true
	if r := ias.reports()[0]; r.Running || r.Ready {
		t.Errorf("stopped, the app still reports %+v", r)
	}
	noContainersLeft(t, env, "ci-imgapp")
	if _, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/"); err == nil {
		t.Error("the app still answers after the instance stopped")
	}
}

// A bind mount whose source leads out of the home through a symbolic
// link is refused at start, with the reason in the app's report, and no
// container runs; one outside the home and the allowed paths likewise.
func TestImageAppBindMountOutsideRefused(t *testing.T) {
	env := testctr.Shared(t)
	a := containerAgent(t, env, newFakeAgentServer(t), "ci-imgapp-mount")
	rt := imageAppRuntime(t, a)
	if err := os.Symlink("/etc", filepath.Join(rt.home, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ source, want string }{
		{"/home/azureuser/escape", "outside"},
		{"/home/azureuser/escape/ssl", "outside"},
		{"/var/lib", "neither in the instance's home nor under a path the location allows"},
	} {
		t.Run(tc.source, func(t *testing.T) {
			task := &node.InstanceTask{Workspace: "ws", Name: "ci", Apps: []*compute.CustomApplication{{
				Name: "web", Image: &compute.CustomAppImage{Reference: env.Registry.Addr + "/" + testctr.PushedBase},
				Command: "sleep 300", Endpoints: []*compute.AppEndpoint{{Target: freeTestPort(t)}},
				BindMounts: []*compute.BindMount{{Source: tc.source, Target: "/data"}},
			}}}
			ias := rt.startImageApps(task, t.TempDir(), nil)
			r := waitApp(t, ias, "refused", func(r compute.InstanceAppReport) bool { return r.Error != "" })
			ias.stop()
			if !strings.Contains(r.Error, "bind_mounts[0].source") || !strings.Contains(r.Error, tc.want) || r.Running {
				t.Errorf("report %+v, want refused naming bind_mounts[0].source and %q", r, tc.want)
			}
			if _, err := os.Stat("/etc/ssl"); err == nil {
				if _, err := os.Stat(filepath.Join(rt.home, "escape", "ssl", "x")); err == nil {
					t.Error("something was made through the link")
				}
			}
			noContainersLeft(t, env, "ci-imgapp-mount")
		})
	}
	// Under a path the location allows, the same source is accepted.
	allowed := t.TempDir()
	ms, err := rt.appMounts(&compute.CustomApplication{BindMounts: []*compute.BindMount{{Source: allowed, Target: "/d"}}}, []string{filepath.Dir(allowed)})
	if err != nil || len(ms) != 1 {
		t.Errorf("an allowed path: %v %+v", err, ms)
	}
}
