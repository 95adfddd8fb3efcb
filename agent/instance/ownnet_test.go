package instance

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/netns"
	"github.com/shoal-ml/shoal/internal/testctr"
)

// Two instances in containers whose applications listen on the same
// port (seed 002 gives every user's rstudio 8787) both start: each
// instance's container has a network namespace of its own, shared by its
// applications, so the second is not refused the port the first holds
// (it was: "Address already in use", restarted for ever). Each answers
// in its own namespace, which its report names for the app proxy; the
// host's loopback has neither. The server, on the host's loopback,
// answers inside at its advertised URL.
func TestContainerInstancesShareAnApplicationPort(t *testing.T) {
	t.Parallel()
	env := testctr.Shared(t)
	image := testctr.InstanceImage(t)
	srv := newFakeAgentServer(t)
	port := freeTestPort(t)
	var rts []*Runtime
	for _, name := range []string{"ci-one", "ci-two"} {
		a := containerAgent(t, env, srv, "node-"+name)
		a.instanceTask(context.Background(), &node.InstanceTask{Workspace: "ws", Name: name, RunAs: "user:" + name,
			Container: &node.InstanceContainer{Image: image, VCPUs: 1, MemoryGB: 0.5},
			Apps: []*compute.CustomApplication{{
				Name: "web", Type: "docker", Image: &compute.CustomAppImage{Type: "docker", Reference: env.Registry.Addr + "/" + testctr.PushedBase},
				Command:   "mkdir -p /tmp/www && echo " + name + " > /tmp/www/who && cd /tmp/www && exec python3 -m http.server " + strconv.Itoa(port) + " --bind 127.0.0.1",
				Endpoints: []*compute.AppEndpoint{{Target: port, Published: port}},
			}}})
		waitRunning(t, a)
		rt := a.instance
		t.Cleanup(rt.Close)
		rts = append(rts, rt)
	}
	for i, rt := range rts {
		name := []string{"ci-one", "ci-two"}[i]
		var app compute.InstanceAppReport
		deadline := time.Now().Add(2 * time.Minute)
		for {
			for _, r := range rt.Report(context.Background()).Apps {
				if r.Name == "web" {
					app = r
				}
			}
			if app.Ready {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's application never got ready: %+v", name, app)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if app.NetNSPID <= 0 {
			t.Fatalf("%s's application report names no namespace: %+v", name, app)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		hc := &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return netns.Dial(ctx, app.NetNSPID, "tcp", addr)
		}}}
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+app.Addr+"/who", nil)
		resp, err := hc.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s's application in its namespace: %v", name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if strings.TrimSpace(string(body)) != name {
			t.Errorf("%s's application answered %q", name, body)
		}
		// The server answers inside, at its advertised address.
		if out, code := boxExecEnv(t, rt, "python3", "-c", "import os, urllib.request, urllib.error\ntry:\n urllib.request.urlopen(os.environ['AZUREML_DEV_URL_MFE'] + 'healthz', timeout=10); print('server answered')\nexcept urllib.error.HTTPError as e:\n print('server answered', e.code)\nexcept OSError as e:\n print('server unreachable', e)"); !strings.Contains(out, "server answered") {
			t.Errorf("%s: the server from inside: %s (exit %d)", name, out, code)
		}
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
		c.Close()
		t.Error("an instance's application listens on the host's loopback")
	}
}

// boxExecEnv runs a command in the instance's container as azureuser,
// with the instance's environment (its sessions').
func boxExecEnv(t *testing.T, rt *Runtime, argv ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code, err := rt.box.ex.ExecWait(context.Background(), rt.box.id, container.ExecOptions{Command: argv, User: boxUser, Env: rt.boxEnv(), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), code
}
