package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
)

// A node freed by a rank report is handed on by the same placement policy
// as a controller pass: with one node, alice over a blocking budget and
// bob's job queued behind hers, the freed node goes to bob's job, as a
// pass over the same queue would give it, not to alice's next job.
func TestHandOnKeepsBudgetDemotion(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	for _, u := range []string{"alice", "bob"} {
		if _, err := h.svc.CreateUser(admin, &identity.User{Name: u}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.svc.AssignRole(admin, "user:"+u, "Contributor", ws); err != nil {
			t.Fatal(err)
		}
	}
	h.compute("cpu", 0, 1, 3600) // one node at most
	if _, err := h.svc.CreateBudget(admin, ws, &money.Budget{Scope: "user:alice", Limit: 0.01, Period: "day", Action: money.BudgetBlock}); err != nil {
		t.Fatal(err)
	}
	submitAs := func(user, name string) {
		t.Helper()
		ctx := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:" + user, Name: user, Kind: identity.PrincipalUser})
		if _, _, err := h.svc.SubmitJob(ctx, ws, &job.JobSpec{Name: name, Command: "train", Compute: "cpu"}); err != nil {
			t.Fatal(err)
		}
	}
	submitAs("alice", "a1")
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	task := h.start(n)
	h.step(10 * time.Minute) // $0.049 of a DS3_v2: alice's $0.01 is spent
	h.finish(n, task, node.RankCompleted)
	h.step(15 * time.Second)
	// Nobody else wants the node: alice's next job still takes it (a
	// budget stops scale-up, not placement).
	submitAs("alice", "a2")
	h.step(time.Second)
	task = h.start(n)
	// Behind it, alice's a3 and then bob's b1.
	submitAs("alice", "a3")
	submitAs("bob", "b1")
	h.step(time.Second)
	if j := h.wantJob("a3", job.JobQueued); !strings.Contains(j.StatusReason, "budget alice") {
		t.Fatalf("a3's reason %q does not name alice's budget", j.StatusReason)
	}
	h.wantJob("b1", job.JobQueued)

	// a2 ends: its report frees the only node.
	code := 0
	next, err := h.svc.ReportRank(h.ctx, n, task.AttemptID, task.Rank, &node.RankReport{State: node.RankCompleted, ExitCode: &code})
	if err != nil {
		t.Fatal(err)
	}
	delete(h.agent(n).running, task.RankRef)
	for _, nt := range next {
		if nt.JobName != "b1" {
			t.Errorf("the report handed the freed node to %s, want b1 (alice is over her blocking budget)", nt.JobName)
		}
	}
	if j := h.job("a3"); j.Status != job.JobQueued {
		t.Fatalf("a3 is %s after a2's report, want Queued: the hand-on skipped the budget demotion a pass applies", j.Status)
	}
	h.step(time.Second)
	h.wantJob("b1", job.JobPreparing)
	h.wantJob("a3", job.JobQueued)
	if got := len(h.nodes("cpu")); got != 1 {
		t.Errorf("%d nodes, want 1", got)
	}
}
