package instance

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/netns"
	"github.com/shoal-ml/shoal/internal/testctr"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// An instance that runs as host processes on a node that makes network
// namespaces has one of its own: its setup script neither reaches a
// listener on the host's loopback nor leaves its own there, yet reaches
// the server at its advertised URL (relayed onto its loopback); its
// command application listens inside, where its health check finds it
// ready, and its report names the application's process for the proxy
// to enter by. Closing the instance ends it all.
func TestHostProcessInstanceHasANetworkOfItsOwn(t *testing.T) {
	t.Parallel()
	testenv.Root(t, "makes network namespaces")
	testenv.Require(t, "network namespaces", canMakeNetns, "a kernel that allows unshare(CLONE_NEWNET)")
	testenv.Python3(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("the host's secret\n"))
			c.Close()
		}
	}()
	accounts, err := runas.New()
	if err != nil {
		t.Fatal(err)
	}
	srv := newFakeAgentServer(t)
	a := newTestAgent(t, Node{NodeID: "node-hostnet", Accounts: accounts, OwnNetwork: true}, srv.URL)
	port := freeTestPort(t)
	script := `python3 - <<'PY' > net.txt 2>&1
import os, socket, urllib.request
def get(addr):
    try:
        s = socket.create_connection(addr, timeout=5)
        return "answered %r" % s.recv(100)
    except Exception as e:
        return "refused (%s)" % e
print("host:", get(("127.0.0.1", ` + strconv.Itoa(host.Addr().(*net.TCPAddr).Port) + `)))
try:
    urllib.request.urlopen(os.environ["AZUREML_DEV_URL_MFE"] + "status", timeout=5).read()
    print("server: answered")
except Exception as e:
    print("server: refused (%s)" % e)
PY`
	a.instanceTask(context.Background(), &node.InstanceTask{Workspace: "ws", Name: "ci-hostnet", RunAs: "user:ci-hostnet",
		StartupScript: &compute.SetupScript{Command: script},
		Apps: []*compute.CustomApplication{{Name: "web", Command: "exec python3 -m http.server " + strconv.Itoa(port) + " --bind 127.0.0.1",
			Endpoints: []*compute.AppEndpoint{{Target: port, Published: port}}}}})
	waitRunning(t, a)
	rt := a.instance
	closed := false
	defer func() {
		if !closed {
			rt.Close()
		}
	}()
	b, _ := os.ReadFile(filepath.Join(rt.home, "net.txt"))
	out := string(b)
	if !strings.Contains(out, "host: refused") || strings.Contains(out, "secret") {
		t.Errorf("the setup script reached the host's loopback:\n%s", out)
	}
	if !strings.Contains(out, "server: answered") {
		t.Errorf("the setup script did not reach the server at its advertised URL:\n%s", out)
	}
	var app compute.InstanceAppReport
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && !app.Ready {
		time.Sleep(200 * time.Millisecond)
		for _, r := range rt.Report(context.Background()).Apps {
			if r.Name == "web" {
				app = r
			}
		}
	}
	if !app.Ready || app.NetNSPID == 0 {
		t.Fatalf("the application: %+v", app)
	}
	if c, err := net.Dial("tcp", app.Addr); err == nil {
		c.Close()
		t.Errorf("the application listens on the host's loopback at %s", app.Addr)
	}
	c, err := netns.Dial(context.Background(), app.NetNSPID, "tcp", app.Addr)
	if err != nil {
		t.Fatalf("the application in the namespace its report names: %v", err)
	}
	c.Close()
	rt.Close()
	closed = true
	if c, err := netns.Dial(context.Background(), app.NetNSPID, "tcp", app.Addr); err == nil {
		c.Close()
		t.Errorf("the application still answers once the instance is closed")
	}
}

// An application from an image beside an instance of host processes that
// has a network namespace of its own gets one of its own too: its
// listener is not on the host's loopback, it is found ready inside, and
// its report names its container's process for the proxy to enter by.
func TestImageAppBesideAHostNetInstanceKeepsOffTheHostsLoopback(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	a := containerAgent(t, env, newFakeAgentServer(t), "ci-imgapp-net")
	rt := imageAppRuntime(t, a)
	testenv.Require(t, "network namespaces", canMakeNetns, "a kernel that allows unshare(CLONE_NEWNET)")
	h, err := rt.openHostNet()
	if err != nil {
		t.Fatalf("the instance's network namespace: %v", err)
	}
	rt.net = h
	defer h.close()
	port := freeTestPort(t)
	task := &node.InstanceTask{Workspace: "ws", Name: "ci", Apps: []*compute.CustomApplication{{
		Name: "web", Type: "docker", Image: &compute.CustomAppImage{Type: "docker", Reference: env.Registry.Addr + "/" + testctr.PushedBase},
		Command:   "exec python3 -m http.server " + strconv.Itoa(port) + " --bind 127.0.0.1",
		Endpoints: []*compute.AppEndpoint{{Target: port, Published: port}},
	}}}
	ias := rt.startImageApps(task, t.TempDir(), nil)
	defer ias.stop()
	r := waitApp(t, ias, "ready", func(r compute.InstanceAppReport) bool { return r.Ready })
	if r.NetNSPID == 0 || r.NetNSPID != r.ContainerPID {
		t.Fatalf("the report names no namespace of the app's container: %+v", r)
	}
	if c, err := net.Dial("tcp", r.Addr); err == nil {
		c.Close()
		t.Errorf("the application listens on the host's loopback at %s", r.Addr)
	}
	c, err := netns.Dial(context.Background(), r.NetNSPID, "tcp", r.Addr)
	if err != nil {
		t.Fatalf("the application in the namespace its report names: %v", err)
	}
	c.Close()
}

// canMakeNetns reports why this host makes no network namespace, if it
// does not.
func canMakeNetns() error {
	ns, err := netns.New()
	if err != nil {
		return err
	}
	return ns.Close()
}
