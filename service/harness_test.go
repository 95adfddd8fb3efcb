package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlite/sqlitetest"
	"github.com/shoal-ml/shoal/store/storetest"
)

// ws is the workspace every harness test works in.
const ws = core.DefaultWorkspace

// t0 is where every harness clock starts.
var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// agent is a simulated `shoal agent`: it remembers what it runs, and
// buffers the orders it received until the test asks for them.
type agent struct {
	id          string
	port        int
	running     map[node.RankRef]*node.AgentTask
	started     []*node.AgentTask // Start orders not yet handed to the test
	stops       []node.StopOrder  // Stop orders not yet handed to the test
	exited      bool              // the server told it to exit
	partitioned bool              // it no longer reaches the server
}

// harness drives the control loop by hand: a real SQLite store on a fake
// clock, the fake provider, simulated agents, and Controller.RunOnce.
// Nothing runs in the background except node releases, which step awaits.
type harness struct {
	t     *testing.T
	ctx   context.Context
	cfg   *config.Config
	cat   *catalog.Catalog
	clock *storetest.Clock
	store *sqlite.DB
	files *filestore.Store
	prov  *fake.Provider
	svc   *service.Services
	ctrl  *control.Controller
	// secretsKey seals the workload signing keys in the store.
	secretsKey *sealing.Key
	agents     map[string]*agent
	order      []string // agent IDs in join order
	ports      int
	// serviceClock gives the services the harness clock too (their
	// reads' "now", such as a cluster's next scale window change).
	serviceClock bool
	// notified counts the services' calls for a placement pass (the
	// server's pokes: Config.Notify, and Submitted, which falls back to it).
	notified atomic.Int64
	// changed records the keys of the computes a change confined to one
	// compute named (Config.Changed).
	changedMu sync.Mutex
	changed   []string
}

// newHarness builds a server from a config document (may be empty).
func newHarness(t *testing.T, configYAML string) *harness {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Parse(strings.NewReader(configYAML))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	dir := t.TempDir()
	clock := storetest.NewClock(t0)
	store, err := sqlite.Open(ctx, sqlite.Config{Path: sqlitetest.Path(t, dir, "shoal.db"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ctx: ctx, cfg: cfg, cat: cat, clock: clock, store: store, files: files, prov: fake.New(), agents: map[string]*agent{}}
	if h.secretsKey, err = sealing.LoadOrCreate(filepath.Join(dir, "keys", "workload.key")); err != nil {
		t.Fatal(err)
	}
	h.boot()
	t.Cleanup(func() {
		h.ctrl.Wait()
		files.Close()
		store.Close()
	})
	if err := h.svc.EnsureDefaultWorkspace(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// boot builds the services and the controller, as a server start does.
func (h *harness) boot() { h.bootWith(h.secretsKey) }

// bootWith is boot with the given secrets key (nil: none).
func (h *harness) bootWith(key *sealing.Key) {
	if h.ctrl != nil {
		h.ctrl.Wait()
	}
	h.svc = service.New(service.Config{
		Store: h.store, Catalog: h.cat, Files: h.files, SecretsKey: key,
		Providers: map[string]node.Provider{"local": h.prov}, ServerURL: "http://shoal.test",
		NodeLeaseTTL: time.Duration(h.cfg.NodeLease), NodeLeaseGrace: time.Duration(h.cfg.NodeLeaseGrace),
		CuratedEnvironments: h.cfg.CuratedEnvironments, Clock: h.serviceClockOrNil(),
		Notify: func() { h.notified.Add(1) },
		Changed: func(key string) {
			h.changedMu.Lock()
			h.changed = append(h.changed, key)
			h.changedMu.Unlock()
		},
	})
	h.ctrl = control.New(h.svc, 1)
}

// serviceClockOrNil is the harness clock when serviceClock is set.
func (h *harness) serviceClockOrNil() core.Clock {
	if h.serviceClock {
		return h.clock
	}
	return nil
}

// restart replaces the services and controller over the same store, as a
// server restart does (ResetLeases included); agents keep running.
func (h *harness) restart() {
	h.t.Helper()
	h.ctrl.Wait()
	h.boot()
	if err := h.ctrl.ResetLeases(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// compute creates a cluster and makes it ready (Succeeded).
func (h *harness) compute(name string, minN, maxN, idle int) {
	h.t.Helper()
	_, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{
		Name: name, Type: "amlcompute", Size: "Standard_DS3_v2",
		MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle,
	}, "")
	if err != nil {
		h.t.Fatalf("create compute %s: %v", name, err)
	}
	if err := h.ctrl.ReconcileComputes(h.ctx); err != nil {
		h.t.Fatal(err)
	}
	if c := h.findCompute(name); c.ProvisioningState != compute.ProvisioningSucceeded {
		h.t.Fatalf("compute %s is %s, want Succeeded", name, c.ProvisioningState)
	}
}

// command is the command of the job of that name.
func command(name string) string { return "python train.py --job " + name }

// submit queues a job of instanceCount nodes at priority ("" = medium).
func (h *harness) submit(name, compute string, instanceCount int, priority string) *job.Job {
	h.t.Helper()
	spec := &job.JobSpec{Name: name, Command: command(name), Compute: compute,
		Resources: &job.JobResources{InstanceCount: instanceCount}}
	if priority != "" {
		spec.QueueSettings = &job.QueueSettings{Priority: priority}
	}
	return h.submitSpec(spec)
}

func (h *harness) submitSpec(spec *job.JobSpec) *job.Job {
	h.t.Helper()
	j, created, err := h.svc.SubmitJob(h.ctx, ws, spec)
	if err != nil || !created {
		h.t.Fatalf("submit %s: created %v, %v", spec.Name, created, err)
	}
	if j.Status != job.JobQueued {
		h.t.Fatalf("submitted job %s is %s, want Queued", j.Name, j.Status)
	}
	return j
}

// step advances the clock by d, lets every connected agent heartbeat (as
// real agents do every few seconds), runs one controller pass and waits for
// the node releases it started.
func (h *harness) step(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	for _, id := range h.order {
		if a := h.agents[id]; !a.exited && !a.partitioned {
			h.sync(id)
		}
	}
	h.pass()
}

// pass runs one controller pass at the current time, without heartbeats.
func (h *harness) pass() {
	h.t.Helper()
	if err := h.ctrl.RunOnce(h.ctx, h.clock.Now()); err != nil {
		h.t.Fatalf("RunOnce: %v", err)
	}
	h.ctrl.Wait()
}

// joinAll joins every node the provider was asked for since the last call,
// as their agents would, and returns their IDs.
func (h *harness) joinAll() []string {
	h.t.Helper()
	var ids []string
	for _, p := range h.prov.TakeProvisioned() {
		ids = append(ids, h.join(p))
	}
	return ids
}

func (h *harness) join(p fake.Provisioned) string {
	h.t.Helper()
	id := p.Req.Node.ID
	h.ports++
	port := 5000 + h.ports
	resp, err := h.svc.JoinNode(h.ctx, p.Req.JoinToken, node.JoinRequest{NodeID: id, Address: "127.0.0.1", Port: port})
	if err != nil {
		h.t.Fatalf("join %s: %v", id, err)
	}
	if resp.NodeID != id || resp.Credential == "" {
		h.t.Fatalf("join %s: response %+v", id, resp)
	}
	h.agents[id] = &agent{id: id, port: port, running: map[node.RankRef]*node.AgentTask{}}
	h.order = append(h.order, id)
	return id
}

func (h *harness) agent(nodeID string) *agent {
	h.t.Helper()
	a := h.agents[nodeID]
	if a == nil {
		h.t.Fatalf("no agent joined as %s", nodeID)
	}
	return a
}

// sync is one agent heartbeat: it tells the server what the agent runs,
// starts what it is told to start and buffers the orders.
func (h *harness) sync(nodeID string) *node.AgentSyncResponse {
	h.t.Helper()
	a := h.agent(nodeID)
	req := &node.AgentSyncRequest{}
	for ref := range a.running {
		req.Running = append(req.Running, ref)
	}
	slices.SortFunc(req.Running, func(x, y node.RankRef) int { return strings.Compare(x.AttemptID, y.AttemptID) })
	resp, err := h.svc.SyncNode(h.ctx, nodeID, req, 0)
	if err != nil {
		h.t.Fatalf("sync %s: %v", nodeID, err)
	}
	for _, task := range resp.Start {
		a.running[task.RankRef] = task
		a.started = append(a.started, task)
	}
	// The server repeats a Stop on every sync until the rank ends: keep
	// one of each.
	for _, st := range resp.Stop {
		if !slices.Contains(a.stops, st) {
			a.stops = append(a.stops, st)
		}
	}
	if resp.Exit {
		a.exited = true
	}
	return resp
}

// syncStart syncs the node and returns the tasks it was told to start since
// the test last asked.
func (h *harness) syncStart(nodeID string) []*node.AgentTask {
	h.t.Helper()
	h.sync(nodeID)
	a := h.agent(nodeID)
	out := a.started
	a.started = nil
	return out
}

// syncStop syncs the node and returns the stop orders it got since the test
// last asked.
func (h *harness) syncStop(nodeID string) []node.StopOrder {
	h.t.Helper()
	h.sync(nodeID)
	a := h.agent(nodeID)
	out := a.stops
	a.stops = nil
	return out
}

// start syncs the node, expects exactly one task, and reports it Running.
func (h *harness) start(nodeID string) *node.AgentTask {
	h.t.Helper()
	tasks := h.syncStart(nodeID)
	if len(tasks) != 1 {
		h.t.Fatalf("node %s got %d tasks to start, want 1: %s", nodeID, len(tasks), describeTasks(tasks))
	}
	h.report(nodeID, tasks[0], node.RankRunning, nil)
	return tasks[0]
}

// report sends a rank report and fails the test on error.
func (h *harness) report(nodeID string, task *node.AgentTask, state string, exit *int) {
	h.t.Helper()
	if _, err := h.svc.ReportRank(h.ctx, nodeID, task.AttemptID, task.Rank, &node.RankReport{State: state, ExitCode: exit}); err != nil {
		h.t.Fatalf("report %s of %s rank %d from %s: %v", state, task.JobName, task.Rank, nodeID, err)
	}
}

// finish reports the end of a task (Completed with exit 0, Failed with
// exit 1, or any other final state) and forgets it in the agent.
func (h *harness) finish(nodeID string, task *node.AgentTask, state string) {
	h.t.Helper()
	code := 1
	switch state {
	case node.RankCompleted:
		code = 0
	case node.RankCanceled, node.RankPreempted:
		code = 143
	}
	h.finishExit(nodeID, task, state, code)
}

func (h *harness) finishExit(nodeID string, task *node.AgentTask, state string, code int) {
	h.t.Helper()
	h.report(nodeID, task, state, &code)
	delete(h.agent(nodeID).running, task.RankRef)
}

// nodes returns the nodes of a compute.
func (h *harness) nodes(compute string) []*node.Node {
	h.t.Helper()
	ns, err := h.svc.ListNodes(h.ctx, ws, compute)
	if err != nil {
		h.t.Fatalf("list nodes of %s: %v", compute, err)
	}
	return ns
}

// node returns one node, or nil when it is gone.
func (h *harness) node(compute, id string) *node.Node {
	h.t.Helper()
	for _, n := range h.nodes(compute) {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// nodeIDs returns the IDs of a compute's nodes, sorted.
func (h *harness) nodeIDs(compute string) []string {
	h.t.Helper()
	var ids []string
	for _, n := range h.nodes(compute) {
		ids = append(ids, n.ID)
	}
	slices.Sort(ids)
	return ids
}

// job returns a job as the API shows it (with its live status reason).
func (h *harness) job(name string) *job.Job {
	h.t.Helper()
	j, err := h.svc.FindJob(h.ctx, ws, name)
	if err != nil {
		h.t.Fatalf("find job %s: %v", name, err)
	}
	return j
}

// wantJob checks a job's status.
func (h *harness) wantJob(name, status string) *job.Job {
	h.t.Helper()
	j := h.job(name)
	if j.Status != status {
		h.t.Fatalf("job %s is %s (%s), want %s", name, j.Status, j.StatusReason, status)
	}
	return j
}

func (h *harness) attempts(name string) []*job.Attempt {
	h.t.Helper()
	as, err := h.svc.ListAttempts(h.ctx, ws, name)
	if err != nil {
		h.t.Fatal(err)
	}
	slices.SortFunc(as, func(a, b *job.Attempt) int { return a.Number - b.Number })
	return as
}

func (h *harness) findCompute(name string) *compute.Compute {
	h.t.Helper()
	c, err := h.svc.FindCompute(h.ctx, ws, name)
	if err != nil {
		h.t.Fatalf("find compute %s: %v", name, err)
	}
	return c
}

// events returns a compute's event log as "kind: reason" lines.
func (h *harness) events(compute string) []string {
	h.t.Helper()
	evs, err := h.svc.ListComputeEvents(h.ctx, ws, compute)
	if err != nil {
		h.t.Fatalf("events of %s: %v", compute, err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Kind+": "+e.Reason)
	}
	return out
}

// countEvents counts the compute events containing substr.
func (h *harness) countEvents(compute, substr string) int {
	h.t.Helper()
	n := 0
	for _, e := range h.events(compute) {
		if strings.Contains(e, substr) {
			n++
		}
	}
	return n
}

// wantEvent fails unless some compute event contains substr.
func (h *harness) wantEvent(compute, substr string) {
	h.t.Helper()
	if h.countEvents(compute, substr) == 0 {
		h.t.Fatalf("no event of %s contains %q; events:\n%s", compute, substr, strings.Join(h.events(compute), "\n"))
	}
}

// provisions counts the successful Provision calls so far.
func (h *harness) provisions() int { return len(h.prov.Provisioned()) }

// releases returns the node IDs the provider was asked to release.
func (h *harness) releases() []string {
	var ids []string
	for _, c := range h.prov.Calls() {
		if c.Method == "Release" && c.Err == nil {
			ids = append(ids, c.NodeID)
		}
	}
	return ids
}

func describeTasks(tasks []*node.AgentTask) string {
	var parts []string
	for _, t := range tasks {
		parts = append(parts, fmt.Sprintf("%s rank %d/%d (attempt %d)", t.JobName, t.Rank, t.NodeCount, t.Attempt))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// usage returns one line of a location's quota usage.
func (h *harness) usage(location, name string) catalog.Usage {
	h.t.Helper()
	us, err := h.svc.ListUsages(h.ctx, location)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, u := range us {
		if u.Name.Value == name {
			return u
		}
	}
	h.t.Fatalf("no usage line %s at %s", name, location)
	return catalog.Usage{}
}

// mustNode returns one node and fails the test when it is gone.
func (h *harness) mustNode(compute, id string) *node.Node {
	h.t.Helper()
	n := h.node(compute, id)
	if n == nil {
		h.t.Fatalf("node %s of %s is gone; nodes: %v", id, compute, h.nodeIDs(compute))
	}
	return n
}

// adminCtx is h.ctx as the bootstrap administrator.
func (h *harness) adminCtx() context.Context {
	return identity.WithPrincipal(h.ctx, &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
}

// setLimits sets the workspace's rank log cap and storage quota as the
// administrator; nil keeps one as it is.
func (h *harness) setLimits(maxLogBytes, storageQuota *int64) {
	h.t.Helper()
	if _, err := h.svc.UpdateWorkspaceLimits(h.adminCtx(), ws, maxLogBytes, storageQuota); err != nil {
		h.t.Fatal(err)
	}
}

// placeOne makes the one-node cluster "cpu", submits job to it, joins its
// node and returns the node with the one rank it is told to start (not
// yet reported running).
func (h *harness) placeOne(job string) (string, *node.AgentTask) {
	h.t.Helper()
	h.compute("cpu", 0, 1, 600)
	h.submit(job, "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	tasks := h.syncStart(n)
	if len(tasks) != 1 {
		h.t.Fatalf("node %s got %d tasks to start, want 1: %s", n, len(tasks), describeTasks(tasks))
	}
	return n, tasks[0]
}
