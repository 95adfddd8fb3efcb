package instance

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

func TestMain(m *testing.M) { os.Exit(testctr.Main(m)) }

// fakeAgentServer answers the agent API calls an instance makes.
type fakeAgentServer struct {
	*httptest.Server
}

func newFakeAgentServer(t *testing.T) *fakeAgentServer {
	f := &fakeAgentServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/status"):
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{}")
		default:
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// testAgent is the agent of an instance under test: its node, and the
// instance runtime it starts as the agent does.
type testAgent struct {
	Node
	mu       sync.Mutex
	instance *Runtime
}

// newTestAgent fills in n as the agent does (a work dir of the test's, its
// run dir, a client of n.ServerURL).
func newTestAgent(t *testing.T, n Node, serverURL string) *testAgent {
	t.Helper()
	if n.WorkDir == "" {
		n.WorkDir = t.TempDir()
	}
	if n.Log == nil {
		n.Log = slog.New(slog.DiscardHandler)
	}
	if n.Clock == nil {
		n.Clock = core.SystemClock{}
	}
	if n.Accounts == nil {
		n.Accounts = runas.Unisolated()
	}
	if n.Address == "" {
		n.Address = "127.0.0.1"
	}
	n.Client = client.NewAgentClient(serverURL, "tok")
	n.SDKEnv = func() map[string]string {
		return map[string]string{"AZUREML_DEV_URL_MFE": strings.TrimRight(serverURL, "/") + "/"}
	}
	runDir, err := files.PrepareWorkDir(n.WorkDir, n.NodeID, n.Accounts.Isolated())
	if err != nil {
		t.Fatal(err)
	}
	n.RunDir = runDir
	return &testAgent{Node: n}
}

// instanceTask starts the instance's runtime with its first task, as the
// agent does.
func (a *testAgent) instanceTask(ctx context.Context, t *node.InstanceTask) {
	a.mu.Lock()
	rt := a.instance
	if rt == nil {
		rt = New(a.Node)
		a.instance = rt
	}
	a.mu.Unlock()
	if rt.Update(t) {
		rt.Start(ctx)
	}
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
	a := newTestAgent(t, Node{NodeID: nodeID, Accounts: accounts, Log: log}, srv.URL)
	a.Ctr = ctrhost.Open(context.Background(), ctrhost.Config{NodeID: nodeID, WorkDir: a.WorkDir, ContainerHost: env.Host, Clock: a.Clock}, log)
	if info := a.Ctr.Info(); !info.Usable() {
		t.Fatalf("runtime info %+v", info)
	}
	t.Cleanup(a.Ctr.Close)
	return a
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
