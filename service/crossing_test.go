package service_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/workload"
)

// These tests check node fencing: a node credential lets an agent act on
// the ranks assigned to its own node, and on nothing else.

// wantCode fails unless err has the given code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want %s", what, code)
		return
	}
	if got := core.ErrorCode(err); got != code {
		t.Errorf("%s: %v (code %s), want %s", what, err, got, code)
	}
}

// withWorkload gives the harness a workload-token issuer on its clock.
func (h *harness) withWorkload() {
	h.svc.SetWorkload(workload.New(workload.Config{Keys: h.svc.WorkloadKeys(), Clock: h.clock, Issuer: "http://shoal.test"}))
}

// identityCompute creates a ready cluster with a system-assigned identity.
func (h *harness) identityCompute(name string, maxN int) {
	h.t.Helper()
	minN, idle := 0, 120
	_, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, &compute.ComputeSpec{
		Name: name, Type: "amlcompute", Size: "Standard_DS3_v2",
		MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle,
		Identity: &compute.IdentitySpec{Type: compute.IdentitySystemAssigned},
	}, "")
	if err != nil {
		h.t.Fatalf("create compute %s: %v", name, err)
	}
	if err := h.ctrl.ReconcileComputes(h.ctx); err != nil {
		h.t.Fatal(err)
	}
}

// upload stores an artifact and returns its ID.
func (h *harness) upload(content string) string {
	h.t.Helper()
	id, err := h.files.PutArtifact(ws, strings.NewReader(content), 1<<20)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

// readLog returns the log of a rank of an attempt, "" when there is none.
func (h *harness) readLog(job string, attempt, rank int) string {
	h.t.Helper()
	f, err := h.files.OpenLog(ws, job, attempt, rank)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return ""
	} else if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

func TestNodeCannotActOnAnotherNodesRank(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkload()
	h.identityCompute("cpu", 2)
	codeA, codeB := h.upload("code of job A"), h.upload("code of job B")
	one := &job.JobResources{InstanceCount: 1}
	h.submitSpec(&job.JobSpec{Name: "ja", Command: command("ja"), Compute: "cpu", Code: codeA, Resources: one})
	h.submitSpec(&job.JobSpec{Name: "jb", Command: command("jb"), Compute: "cpu", Code: codeB, Resources: one})
	h.step(0)
	ids := h.joinAll()
	if len(ids) != 2 {
		t.Fatalf("joined %d nodes, want 2", len(ids))
	}
	h.step(0)
	tasks := map[string]*node.AgentTask{}
	nodeOf := map[string]string{}
	for _, id := range ids {
		task := h.start(id)
		tasks[task.JobName], nodeOf[task.JobName] = task, id
	}
	taskA, nodeA, nodeB := tasks["ja"], nodeOf["ja"], nodeOf["jb"]
	if taskA == nil || tasks["jb"] == nil || nodeA == nodeB {
		t.Fatalf("jobs not one per node: %v", nodeOf)
	}
	h.wantJob("ja", job.JobRunning)
	h.wantJob("jb", job.JobRunning)

	// A does its own work: all allowed.
	if _, err := h.svc.CheckNodeRank(h.ctx, nodeA, taskA.AttemptID, 0); err != nil {
		t.Fatalf("A checking its own rank: %v", err)
	}
	if err := h.svc.WriteRankLog(h.ctx, nodeA, taskA.AttemptID, 0, 0, []byte("A's log\n")); err != nil {
		t.Fatalf("A writing its own log: %v", err)
	}
	tok, err := h.svc.MintWorkloadToken(h.ctx, nodeA, taskA.AttemptID, 0, &node.TokenRequest{Resource: "shoal"})
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("A minting a token for its own rank: %v", err)
	}
	if p, err := h.svc.AuthenticateWorkload(h.ctx, tok.AccessToken); err != nil || p.AttemptID != taskA.AttemptID {
		t.Fatalf("A's workload token: %+v %v", p, err)
	}
	if f, err := h.svc.OpenArtifactForNode(h.ctx, nodeA, codeA); err != nil {
		t.Fatalf("A reading its job's code: %v", err)
	} else {
		f.Close()
	}
	if f, err := h.svc.OpenArtifactForNode(h.ctx, nodeB, codeB); err != nil {
		t.Fatalf("B reading its job's code: %v", err)
	} else {
		f.Close()
	}

	before := h.job("ja")
	eventsBefore, err := h.svc.ListJobEvents(h.ctx, ws, "ja")
	if err != nil {
		t.Fatal(err)
	}

	// B acts on A's rank (and on ranks that are nobody's): all refused.
	refs := []struct {
		name    string
		attempt string
		rank    int
	}{
		{"A's rank", taskA.AttemptID, 0},
		{"A's attempt, rank out of range", taskA.AttemptID, 1},
		{"A's attempt, negative rank", taskA.AttemptID, -1},
		{"B's attempt, rank out of range", tasks["jb"].AttemptID, 1},
		{"unknown attempt", "att-does-not-exist", 0},
	}
	exit0 := 0
	for _, r := range refs {
		what := func(op string) string { return "B " + op + " for " + r.name }
		for _, state := range []string{node.RankCompleted, node.RankFailed, node.RankRunning, node.RankCanceled} {
			_, err := h.svc.ReportRank(h.ctx, nodeB, r.attempt, r.rank, &node.RankReport{State: state, ExitCode: &exit0})
			wantCode(t, what("ReportRank "+state), err, core.EFORBIDDEN)
		}
		wantCode(t, what("WriteRankLog"), h.svc.WriteRankLog(h.ctx, nodeB, r.attempt, r.rank, 0, []byte("B was here\n")), core.EFORBIDDEN)
		wantCode(t, what("PutRankOutputs"), h.svc.PutRankOutputs(h.ctx, nodeB, r.attempt, r.rank, strings.NewReader("B's outputs")), core.EFORBIDDEN)
		rc, err := h.svc.OpenRestoreOutputs(h.ctx, nodeB, r.attempt, r.rank)
		if rc != nil {
			rc.Close()
		}
		wantCode(t, what("OpenRestoreOutputs"), err, core.EFORBIDDEN)
		resp, err := h.svc.MintWorkloadToken(h.ctx, nodeB, r.attempt, r.rank, &node.TokenRequest{Resource: "shoal"})
		if resp != nil {
			t.Errorf("%s: got a token", what("MintWorkloadToken"))
		}
		wantCode(t, what("MintWorkloadToken"), err, core.EFORBIDDEN)
		_, err = h.svc.CheckNodeRank(h.ctx, nodeB, r.attempt, r.rank)
		wantCode(t, what("CheckNodeRank"), err, core.EFORBIDDEN)
	}
	// B reads A's code (and things that are no artifact of its job).
	for _, id := range []string{codeA, "sha256:" + strings.Repeat("0", 64), "../x", ""} {
		rc, err := h.svc.OpenArtifactForNode(h.ctx, nodeB, id)
		if rc != nil {
			rc.Close()
		}
		wantCode(t, "B OpenArtifactForNode("+id+")", err, core.EFORBIDDEN)
	}
	// An unknown node gets nothing either.
	if _, err := h.svc.CheckNodeRank(h.ctx, "cpu-n999", taskA.AttemptID, 0); err == nil {
		t.Error("an unknown node passed CheckNodeRank")
	}
	if rc, err := h.svc.OpenArtifactForNode(h.ctx, "cpu-n999", codeA); err == nil {
		rc.Close()
		t.Error("an unknown node read A's code")
	}

	// Nothing changed.
	after := h.wantJob("ja", job.JobRunning)
	if after.Version != before.Version || after.CurrentAttemptID != before.CurrentAttemptID || after.AttemptCount != before.AttemptCount {
		t.Errorf("job A changed: version %d→%d, attempt %s→%s", before.Version, after.Version, before.CurrentAttemptID, after.CurrentAttemptID)
	}
	if eventsAfter, _ := h.svc.ListJobEvents(h.ctx, ws, "ja"); len(eventsAfter) != len(eventsBefore) {
		t.Errorf("job A has %d events, had %d", len(eventsAfter), len(eventsBefore))
	}
	as := h.attempts("ja")
	if len(as) != 1 || as[0].Ranks[0].Status != node.RankRunning || as[0].Ranks[0].NodeID != nodeA {
		t.Errorf("A's attempt after B's attempts: %+v", as[0].Ranks[0])
	}
	if n := h.mustNode("cpu", nodeA); n.State != node.NodeRunning || n.CurrentAttemptID != taskA.AttemptID {
		t.Errorf("node A after B's attempts: %s on %s", n.State, n.CurrentAttemptID)
	}
	if got := h.readLog("ja", 1, 0); got != "A's log\n" {
		t.Errorf("A's log is %q", got)
	}
	if got := h.readLog("ja", 1, 1); got != "" {
		t.Errorf("a log for rank 1 of A's job appeared: %q", got)
	}
	if h.files.HasOutputs(ws, "ja", 1, 0) {
		t.Error("outputs appeared for A's rank")
	}
	h.wantJob("jb", job.JobRunning)

	// A's attempt ends; then A's own reports for it are stale.
	h.finish(nodeA, taskA, node.RankCompleted)
	h.wantJob("ja", job.JobCompleted)
	_, err = h.svc.ReportRank(h.ctx, nodeA, taskA.AttemptID, 0, &node.RankReport{State: node.RankFailed, ExitCode: &exit0})
	wantCode(t, "A reporting for its ended attempt", err, core.ECONFLICT)
	_, err = h.svc.MintWorkloadToken(h.ctx, nodeA, taskA.AttemptID, 0, &node.TokenRequest{Resource: "shoal"})
	wantCode(t, "A minting for its ended attempt", err, core.EFORBIDDEN)
	if _, err := h.svc.AuthenticateWorkload(h.ctx, tok.AccessToken); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("A's workload token after the attempt ended: %v, want EUNAUTHORIZED", err)
	}
	if rc, err := h.svc.OpenArtifactForNode(h.ctx, nodeA, codeA); err == nil {
		rc.Close()
		t.Error("A read its finished job's code")
	}
	_, err = h.svc.ReportRank(h.ctx, nodeB, taskA.AttemptID, 0, &node.RankReport{State: node.RankFailed, ExitCode: &exit0})
	wantCode(t, "B reporting for A's ended attempt", err, core.EFORBIDDEN)
	h.wantJob("ja", job.JobCompleted)
}

func TestJoinTokens(t *testing.T) {
	t.Run("single use", func(t *testing.T) {
		h := newHarness(t, "")
		h.compute("cpu", 0, 1, 120)
		h.submit("j1", "cpu", 1, "")
		h.step(0)
		prov := h.prov.TakeProvisioned()
		if len(prov) != 1 {
			t.Fatalf("%d provisioned, want 1", len(prov))
		}
		id, token := prov[0].Req.Node.ID, prov[0].Req.JoinToken
		resp, err := h.svc.JoinNode(h.ctx, token, node.JoinRequest{NodeID: id, Address: "127.0.0.1", Port: 5001})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.svc.JoinNode(h.ctx, token, node.JoinRequest{NodeID: id, Address: "10.0.0.66", Port: 6666})
		wantCode(t, "second join", err, core.EUNAUTHORIZED)
		// The first credential stands, and the node's address is the first one.
		if got, err := h.svc.AuthenticateNode(h.ctx, resp.Credential); err != nil || got != id {
			t.Fatalf("credential after a replayed join: %q %v", got, err)
		}
		if n := h.mustNode("cpu", id); n.PrivateIPAddress != "127.0.0.1" || n.Port != 5001 {
			t.Errorf("replayed join changed the node: %s:%d", n.PrivateIPAddress, n.Port)
		}
		// The join token is no node credential.
		if _, err := h.svc.AuthenticateNode(h.ctx, token); core.ErrorCode(err) != core.EUNAUTHORIZED {
			t.Errorf("join token used as a credential: %v", err)
		}
	})

	t.Run("bound to its node", func(t *testing.T) {
		h := newHarness(t, "")
		h.compute("cpu", 0, 2, 120)
		h.submit("j1", "cpu", 1, "")
		h.submit("j2", "cpu", 1, "")
		h.step(0)
		prov := h.prov.TakeProvisioned()
		if len(prov) != 2 {
			t.Fatalf("%d provisioned, want 2", len(prov))
		}
		a, b := prov[0].Req, prov[1].Req
		_, err := h.svc.JoinNode(h.ctx, a.JoinToken, node.JoinRequest{NodeID: b.Node.ID, Address: "10.0.0.66", Port: 6666})
		wantCode(t, "A's join token for node B", err, core.EUNAUTHORIZED)
		_, err = h.svc.JoinNode(h.ctx, a.JoinToken, node.JoinRequest{NodeID: "", Address: "10.0.0.66", Port: 6666})
		wantCode(t, "A's join token without a node ID", err, core.EUNAUTHORIZED)
		for _, id := range []string{a.Node.ID, b.Node.ID} {
			if n := h.mustNode("cpu", id); n.State != node.NodePreparing || n.PrivateIPAddress == "10.0.0.66" {
				t.Errorf("node %s after a misdirected join: %s at %s", id, n.State, n.PrivateIPAddress)
			}
		}
		// B's own token still joins B.
		if _, err := h.svc.JoinNode(h.ctx, b.JoinToken, node.JoinRequest{NodeID: b.Node.ID, Address: "127.0.0.1", Port: 5002}); err != nil {
			t.Fatalf("B joining with its own token: %v", err)
		}
		// A made-up token joins nobody.
		_, err = h.svc.JoinNode(h.ctx, "shoal_made-up", node.JoinRequest{NodeID: a.Node.ID})
		wantCode(t, "made-up join token", err, core.EUNAUTHORIZED)
	})

	t.Run("expires", func(t *testing.T) {
		h := newHarness(t, "")
		loc, err := h.cat.Location("local")
		if err != nil {
			t.Fatal(err)
		}
		h.compute("cpu", 0, 2, 120)
		h.submit("j1", "cpu", 1, "")
		h.submit("j2", "cpu", 1, "")
		h.step(0)
		prov := h.prov.TakeProvisioned()
		if len(prov) != 2 {
			t.Fatalf("%d provisioned, want 2", len(prov))
		}
		lifetime := loc.ProvisioningDelay + 5*time.Minute // the default JoinTimeout
		// Just before the deadline the token works...
		h.clock.Advance(lifetime - time.Second)
		if _, err := h.svc.JoinNode(h.ctx, prov[0].Req.JoinToken, node.JoinRequest{NodeID: prov[0].Req.Node.ID, Address: "127.0.0.1", Port: 5001}); err != nil {
			t.Fatalf("join just before the deadline: %v", err)
		}
		// ...at and after it, it does not.
		h.clock.Advance(time.Second)
		_, err = h.svc.JoinNode(h.ctx, prov[1].Req.JoinToken, node.JoinRequest{NodeID: prov[1].Req.Node.ID, Address: "127.0.0.1", Port: 5002})
		wantCode(t, "join at the deadline", err, core.EUNAUTHORIZED)
		h.clock.Advance(time.Hour)
		_, err = h.svc.JoinNode(h.ctx, prov[1].Req.JoinToken, node.JoinRequest{NodeID: prov[1].Req.Node.ID, Address: "127.0.0.1", Port: 5002})
		wantCode(t, "join after the deadline", err, core.EUNAUTHORIZED)
		if n := h.node("cpu", prov[1].Req.Node.ID); n != nil && n.State != node.NodePreparing {
			t.Errorf("late node is %s after a refused join", n.State)
		}
	})
}
