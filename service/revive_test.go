package service_test

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// A result kept by a node while the server was away is recorded with the
// time the rank really ended, and the job with it.
func TestLateResultKeepsItsEndTime(t *testing.T) {
	h := newHarness(t, leaseConfig)
	h.compute("cpu", 0, 1, 120)
	h.submit("j1", "cpu", 1, "")
	h.step(0)
	node := oneNode(t, h)
	h.step(0)
	task := runOn(t, h, node, "j1")
	ended := h.clock.Now().Add(2 * time.Second)
	h.clock.Advance(time.Hour)
	code := 0
	if _, err := h.svc.ReportRank(h.ctx, node, task.AttemptID, task.Rank, &nodekind.RankReport{State: nodekind.RankCompleted, ExitCode: &code, EndTime: &ended}); err != nil {
		t.Fatal(err)
	}
	j := h.wantJob("j1", job.JobCompleted)
	if j.EndTime == nil || !j.EndTime.Equal(ended) {
		t.Fatalf("job end time %v, want the reported %v", j.EndTime, ended)
	}
	// An end time in the future is not believed.
	h.submit("j2", "cpu", 1, "")
	h.step(0)
	task = runOn(t, h, node, "j2")
	future := h.clock.Now().Add(time.Hour)
	if _, err := h.svc.ReportRank(h.ctx, node, task.AttemptID, task.Rank, &nodekind.RankReport{State: nodekind.RankCompleted, ExitCode: &code, EndTime: &future}); err != nil {
		t.Fatal(err)
	}
	if j := h.wantJob("j2", job.JobCompleted); !j.EndTime.Equal(h.clock.Now()) {
		t.Fatalf("job end time %v, want the server's now %v for a future end time", j.EndTime, h.clock.Now())
	}
}

// A new agent on a node (revived after its predecessor exited) that holds
// the rank's result keeps the rank; one that knows nothing of it reports it
// lost on its first sync, and the job is requeued without spending retries.
func TestFirstSyncOfANewAgent(t *testing.T) {
	setup := func(t *testing.T) (*harness, string, *nodekind.AgentTask) {
		h := newHarness(t, leaseConfig)
		h.compute("cpu", 0, 1, 120)
		h.submit("j1", "cpu", 1, "")
		h.step(0)
		node := oneNode(t, h)
		h.step(0)
		return h, node, runOn(t, h, node, "j1")
	}
	t.Run("with the result pending", func(t *testing.T) {
		h, node, task := setup(t)
		resp, err := h.svc.SyncNode(h.ctx, node, &nodekind.AgentSyncRequest{Pending: []nodekind.RankRef{task.RankRef}, First: true}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Start) != 0 || len(resp.Stop) != 0 || resp.Exit {
			t.Fatalf("answer %+v; want nothing to do", resp)
		}
		h.wantJob("j1", job.JobRunning)
	})
	t.Run("without it", func(t *testing.T) {
		h, node, task := setup(t)
		if _, err := h.svc.SyncNode(h.ctx, node, &nodekind.AgentSyncRequest{First: true}, 0); err != nil {
			t.Fatal(err)
		}
		// Requeued, and given straight back to the node, whose new agent is
		// healthy.
		j := h.wantJob("j1", job.JobPreparing)
		if j.InfraRequeues != 1 || j.FailedAttempts != 0 {
			t.Fatalf("%+v; want one infrastructure requeue and no failed attempt", j)
		}
		if a := h.attempts("j1"); len(a) != 2 || a[0].Status != job.AttemptLost || a[0].ID != task.AttemptID {
			t.Fatalf("attempts %+v; want the first Lost and a second", a)
		}
	})
	t.Run("a later sync without it is not the agent's first", func(t *testing.T) {
		h, node, _ := setup(t)
		if _, err := h.svc.SyncNode(h.ctx, node, &nodekind.AgentSyncRequest{}, 0); err != nil {
			t.Fatal(err)
		}
		h.wantJob("j1", job.JobRunning)
	})
}

// A job that ended before its Running report got through keeps the start
// time its node reports.
func TestFinalReportCarriesTheStartTime(t *testing.T) {
	h := newHarness(t, leaseConfig)
	h.compute("cpu", 0, 1, 120)
	h.submit("j1", "cpu", 1, "")
	h.step(0)
	node := oneNode(t, h)
	h.step(0)
	tasks := h.syncStart(node)
	if len(tasks) != 1 {
		t.Fatalf("tasks %v", tasks)
	}
	started := h.clock.Now()
	h.clock.Advance(time.Second)
	ended, code := h.clock.Now(), 0
	if _, err := h.svc.ReportRank(h.ctx, node, tasks[0].AttemptID, tasks[0].Rank, &nodekind.RankReport{State: nodekind.RankCompleted, ExitCode: &code, StartTime: &started, EndTime: &ended}); err != nil {
		t.Fatal(err)
	}
	j := h.wantJob("j1", job.JobCompleted)
	if j.StartTime == nil || !j.StartTime.Equal(started) {
		t.Fatalf("job start time %v, want %v", j.StartTime, started)
	}
	if a := h.attempts("j1"); a[0].Ranks[0].StartTime == nil || !a[0].Ranks[0].StartTime.Equal(started) {
		t.Fatalf("rank start time %v", a[0].Ranks[0].StartTime)
	}
}
