package service_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// outcomes is an Observer that records what the services report of jobs.
type outcomes struct {
	mu      sync.Mutex
	started []time.Duration // queue waits, one per JobStarted
	ended   map[string]int  // JobEnded by status
}

func (o *outcomes) JobStarted(_, _ string, wait time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started = append(o.started, wait)
}

func (o *outcomes) JobEnded(_, _, status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended[status]++
}

func (o *outcomes) NodeReady(string, string, time.Duration)      {}
func (o *outcomes) ScaleDecision(string, string, string, string) {}

// observe installs a recording observer on the harness's services.
func observe(h *harness) *outcomes {
	o := &outcomes{ended: map[string]int{}}
	h.svc.SetObserver(o)
	return o
}

// want fails unless the observer was told of starts jobs started and of
// the ended counts by status, exactly.
func (o *outcomes) want(t *testing.T, starts int, ended map[string]int) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.started) != starts {
		t.Errorf("JobStarted %d times (waits %v), want %d", len(o.started), o.started, starts)
	}
	if fmt.Sprint(o.ended) != fmt.Sprint(ended) {
		t.Errorf("JobEnded %v, want %v", o.ended, ended)
	}
}

// A job cancelled in the queue has ended (Canceled) and never started.
func TestMetricsCountCancelInQueue(t *testing.T) {
	h := newHarness(t, "")
	o := observe(h)
	h.compute("cpu", 0, 1, 600)
	h.submit("q", "cpu", 1, "")
	if _, err := h.svc.CancelJob(h.ctx, ws, "q"); err != nil {
		t.Fatal(err)
	}
	h.wantJob("q", job.JobCanceled)
	// A second cancel changes nothing and reports nothing.
	if _, err := h.svc.CancelJob(h.ctx, ws, "q"); err != nil {
		t.Fatal(err)
	}
	o.want(t, 0, map[string]int{job.JobCanceled: 1})
}

// A job that ends within the agent's 20 ms is reported once, straight to
// Completed with its start time: it started (its queue wait is observed)
// and ended.
func TestMetricsCountFastJob(t *testing.T) {
	h := newHarness(t, "")
	o := observe(h)
	h.compute("cpu", 0, 1, 600)
	h.submit("fast", "cpu", 1, "")
	h.step(0)
	n := oneNode(t, h)
	h.step(30 * time.Second) // heartbeats, then the pass that places it
	tasks := h.syncStart(n)
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want 1", len(tasks))
	}
	start, zero := h.clock.Now(), 0
	if _, err := h.svc.ReportRank(h.ctx, n, tasks[0].AttemptID, 0, &nodekind.RankReport{State: nodekind.RankCompleted, ExitCode: &zero, StartTime: &start, EndTime: &start}); err != nil {
		t.Fatal(err)
	}
	h.wantJob("fast", job.JobCompleted)
	o.want(t, 1, map[string]int{job.JobCompleted: 1})
	if len(o.started) == 1 && o.started[0] != 30*time.Second {
		t.Errorf("queue wait %v, want 30s", o.started[0])
	}
}

// A job retried after a failure starts once (its first start) and ends
// once.
func TestMetricsCountRetriedJobOnce(t *testing.T) {
	h := newHarness(t, "")
	o := observe(h)
	h.compute("cpu", 0, 1, 600)
	retries := 1
	h.submitSpec(&job.JobSpec{Name: "r", Command: command("r"), Compute: "cpu", Retries: &retries})
	h.step(0)
	n := oneNode(t, h)
	h.step(0)
	h.finish(n, runOn(t, h, n, "r"), nodekind.RankFailed)
	h.step(0)
	h.finish(n, runOn(t, h, n, "r"), nodekind.RankCompleted)
	h.wantJob("r", job.JobCompleted)
	o.want(t, 1, map[string]int{job.JobCompleted: 1})
}

// A lost node requeues its job without ending it; the job ends once, on
// the node that replaces it. A job whose cancel was requested ends
// (Canceled) when its node is lost, with no report from the agent.
func TestMetricsCountLostNode(t *testing.T) {
	h := newHarness(t, "")
	o := observe(h)
	h.compute("cpu", 0, 2, 600)
	h.submit("a", "cpu", 1, "")
	h.submit("b", "cpu", 1, "")
	h.step(0)
	ids := h.joinAll()
	if len(ids) != 2 {
		t.Fatalf("joined %v, want 2 nodes", ids)
	}
	h.step(0)
	task := map[string]*nodekind.AgentTask{}
	node := map[string]string{}
	for _, n := range ids {
		tk := h.start(n)
		task[tk.JobName], node[tk.JobName] = tk, n
	}
	if _, err := h.svc.CancelJob(h.ctx, ws, "b"); err != nil {
		t.Fatal(err)
	}
	h.wantJob("b", job.JobCancelRequested)
	for _, n := range ids {
		h.agent(n).partitioned = true
	}
	h.step(21 * time.Second)
	h.wantJob("b", job.JobCanceled)
	h.wantJob("a", job.JobQueued)
	o.want(t, 2, map[string]int{job.JobCanceled: 1})

	// a runs again on a new node and completes: one more end, no second
	// start.
	h.step(0)
	n := oneNode(t, h)
	h.step(0)
	h.finish(n, runOn(t, h, n, "a"), nodekind.RankCompleted)
	h.wantJob("a", job.JobCompleted)
	o.want(t, 2, map[string]int{job.JobCanceled: 1, job.JobCompleted: 1})
}

// A rank the server ends itself (the job was cancelled while its node had
// not started it yet) ends the job, and that is counted.
func TestMetricsCountServerEndedRank(t *testing.T) {
	h := newHarness(t, "")
	o := observe(h)
	h.compute("cpu", 0, 1, 600)
	h.submit("p", "cpu", 1, "")
	h.step(0)
	n := oneNode(t, h)
	h.pass() // placed, Preparing; the agent has not synced since
	h.wantJob("p", job.JobPreparing)
	if _, err := h.svc.CancelJob(h.ctx, ws, "p"); err != nil {
		t.Fatal(err)
	}
	h.sync(n)
	h.wantJob("p", job.JobCanceled)
	if as := h.attempts("p"); len(as) != 1 || !slices.ContainsFunc(as[0].Ranks, func(r *job.RankStatus) bool { return r.Status == job.AttemptCanceled }) {
		t.Fatalf("attempts %+v", as)
	}
	o.want(t, 0, map[string]int{job.JobCanceled: 1})
}

// A job still queued when its compute is deleted fails, and is counted
// once as Failed.
func TestMetricsCountJobOfDeletedCompute(t *testing.T) {
	h := newHarness(t, "")
	o := observe(h)
	h.compute("cpu", 0, 1, 600)
	h.submit("orphan", "cpu", 1, "")
	if _, err := h.svc.DeleteCompute(h.ctx, ws, "cpu", ""); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	h.step(time.Second)
	h.wantJob("orphan", job.JobFailed)
	o.want(t, 0, map[string]int{job.JobFailed: 1})
}
