package rank

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/testctr"
)

func TestMain(m *testing.M) { os.Exit(testctr.Main(m)) }

// testAgent is the agent of ranks under test, as the real one is to them:
// the node they run on, and their results put in an outbox of its own and
// delivered at once.
type testAgent struct {
	Node
	outbox *files.Outbox

	mu       sync.Mutex
	finished map[node.RankRef]bool
	// results are the results handed over, as Finish got them.
	results map[node.RankRef]files.Result
}

// newTestAgent fills in n as the agent does (a work dir of the test's, its
// run dir, a client of n.ServerURL) and is its Agent.
func newTestAgent(t *testing.T, n Node) *testAgent {
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
	n.Client = client.NewAgentClient(n.ServerURL, "tok")
	runDir, err := files.PrepareWorkDir(n.WorkDir, n.NodeID, n.Accounts.Isolated())
	if err != nil {
		t.Fatal(err)
	}
	n.RunDir = runDir
	o, errs := files.OpenOutbox(n.WorkDir)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	a := &testAgent{outbox: o, finished: map[node.RankRef]bool{}, results: map[node.RankRef]files.Result{}}
	n.Agent = a
	a.Node = n
	return a
}

// newRank is task on the agent's node.
func (a *testAgent) newRank(task *node.AgentTask) *Rank { return New(a.Node, task) }

// result is ref's result as the rank handed it over.
func (a *testAgent) result(ref node.RankRef) files.Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.results[ref]
}

// ended reports whether ref's result was handed over.
func (a *testAgent) ended(ref node.RankRef) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.finished[ref]
}

func (a *testAgent) Finish(ctx context.Context, p *files.Result) bool {
	_ = a.outbox.Put(p)
	a.mu.Lock()
	a.finished[p.Ref] = true
	a.results[p.Ref] = *p
	a.mu.Unlock()
	if _, err := a.outbox.Deliver(ctx, a.Client, p, a.Accounts.Isolated(), false, a.Log); err != nil {
		a.Log.Warn("delivering a result failed", "err", err)
		return false
	}
	return true
}

func (a *testAgent) StartRank(context.Context, *node.AgentTask) {}
func (a *testAgent) SampleGPUs(context.Context, node.RankRef)   {}
func (a *testAgent) TakenBack(reason string, code int) bool     { return false }
func (a *testAgent) CABundle() string                           { return "" }
func (a *testAgent) SDKEnv() map[string]string {
	return map[string]string{"AZUREML_DEV_URL_MFE": strings.TrimRight(a.ServerURL, "/") + "/"}
}
