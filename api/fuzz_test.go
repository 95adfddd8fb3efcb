package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// fuzzRoutes are the message-taking routes the fuzz target posts to: the
// agent protocol (the join with a valid join token, the rest with the
// node's credential), the ARM PUT and PATCH (with the admin's token) and
// the OAuth token endpoint (no credential). ATT in a path is the node's
// current attempt.
var fuzzRoutes = []struct{ method, path, cred, ctype string }{
	{"POST", "/agent/v1/sync", "node", "application/json"},
	{"POST", "/agent/v1/attempts/ATT/ranks/0/status", "node", "application/json"},
	{"POST", "/agent/v1/attempts/ATT/ranks/0/token", "node", "application/json"},
	{"POST", "/agent/v1/attempts/ATT/ranks/0/gpu", "node", "application/json"},
	{"POST", "/agent/v1/join", "join", "application/json"},
	{"PUT", "/subscriptions/s/resourceGroups/r/providers/Microsoft.MachineLearningServices/workspaces/default/computes/fuzz-c?api-version=2024-04-01", "admin", "application/json"},
	{"PATCH", "/subscriptions/s/resourceGroups/r/providers/Microsoft.MachineLearningServices/workspaces/default/computes/gpu?api-version=2024-04-01", "admin", "application/json"},
	{"POST", "/subscriptions/s/providers/Microsoft.MachineLearningServices/locations/local/updateQuotas?api-version=2024-04-01", "admin", "application/json"},
	{"PUT", "/subscriptions/s/resourceGroups/r/providers/Microsoft.MachineLearningServices/workspaces/default/environments/fuzz-e/versions/1?api-version=2024-04-01", "admin", "application/json"},
	{"POST", "/adfs/oauth2/token", "", "application/x-www-form-urlencoded"},
	{"PUT", "/api/v1/workspaces/default/computes/fuzz-n", "admin", "application/json"},
	{"POST", "/api/v1/workspaces/default/budgets", "admin", "application/json"},
}

// joinNodeID in a join body is replaced by the node the current join
// token belongs to, so that the fuzzer can reach a successful join.
const joinNodeID = "NODE_ID"

// fuzzAgent keeps what the agent routes need between inputs: a node
// joined by hand to cluster fz-run with a current attempt (a new job is
// placed on it once the last one ends; a new node joins once an input made
// the node leave, or it was lost) and an unused join token for cluster
// fz-join (a new one once it is spent).
type fuzzAgent struct {
	e                *testEnv
	ctrl             *control.Controller
	node, cred, job  string
	last             string // the last attempt seen
	jobs             int
	joinNode, joinTk string
}

// newNode joins a new node to fz-run.
func (a *fuzzAgent) newNode(t testing.TB) {
	ctx := context.Background()
	jc, err := a.e.svc.AddStaticNode(ctx, "default", "fz-run")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.e.svc.JoinNode(ctx, jc.JoinToken, node.JoinRequest{NodeID: jc.NodeID, Address: "127.0.0.1", Port: 5001})
	if err != nil {
		t.Fatal(err)
	}
	a.node, a.cred = jc.NodeID, resp.Credential
}

// usable reports whether the node can still take work.
func (a *fuzzAgent) usable(t testing.TB) bool {
	nodes, err := a.e.svc.ListNodes(context.Background(), "default", "fz-run")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.ID == a.node {
			return (n.State == node.NodeIdle || n.State == node.NodeRunning) && !n.Draining
		}
	}
	return false
}

// attempt returns the ID of the node's current attempt, placing a new
// job on the node when the last one has ended. When none can be placed
// the last attempt serves, whose messages are refused after their bodies
// are read.
func (a *fuzzAgent) attempt(t *testing.T) string {
	ctx := context.Background()
	for range 3 {
		j, err := a.e.svc.FindJob(ctx, "default", a.job)
		if err != nil {
			t.Fatal(err)
		}
		if j.CurrentAttemptID != "" {
			a.last = j.CurrentAttemptID
		}
		if j.CurrentAttemptID != "" && (j.Status == job.JobPreparing || j.Status == job.JobRunning) {
			return j.CurrentAttemptID
		}
		if !a.usable(t) {
			a.newNode(t)
		}
		if job.JobTerminal(j.Status) {
			a.jobs++
			a.job = fmt.Sprintf("fz-%d", a.jobs)
			if _, _, err := a.e.svc.SubmitJob(ctx, "default", &job.JobSpec{Name: a.job, Command: "echo hi", Compute: "fz-run"}); err != nil {
				t.Fatal(err)
			}
		}
		// A heartbeat first: the node must not miss its lease in a long
		// run (nothing else syncs it but the fuzzer's inputs).
		if _, err := a.e.svc.SyncNode(ctx, a.node, &node.AgentSyncRequest{}, 0); err != nil {
			t.Fatal(err)
		}
		if err := a.ctrl.RunOnce(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		a.ctrl.Wait()
	}
	return a.last
}

// joinToken returns an unused join token and the node it belongs to, a
// machine added by hand to cluster fz-join.
func (a *fuzzAgent) joinToken(t *testing.T) (token, node string) {
	if a.joinTk == "" {
		// The spent token's node leaves first: fz-join's max_instances
		// (1) bounds its nodes, joined or not.
		if a.joinNode != "" {
			if _, err := a.e.svc.RemoveStaticNode(context.Background(), "default", "fz-join", a.joinNode); err != nil {
				t.Fatal(err)
			}
		}
		jc, err := a.e.svc.AddStaticNode(context.Background(), "default", "fz-join")
		if err != nil {
			t.Fatal(err)
		}
		a.joinTk, a.joinNode = jc.JoinToken, jc.NodeID
	}
	return a.joinTk, a.joinNode
}

// FuzzMessages sends arbitrary bodies to every agent-protocol route with
// a joined node's credential (a valid join token for the join), and to the
// ARM (computes, quotas, environment versions), OAuth and native routes
// that take documents: no message may crash the server or get a 5xx — a
// bad one is a 4xx that says what is wrong.
// Agent messages must reach their handler's decoder: a 401 before it, or
// a path that is no route, fails (the seed corpus run catches both).
func FuzzMessages(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"running":[{"attempt_id":"a","rank":0}]}`, `{"state":"Running"}`, `{"state":"Completed","exit_code":0}`,
		`{"state":"Failed","exit_code":3,"reason":"x","start_time":"2025-01-01T00:00:00Z","end_time":"2024-01-01T00:00:00Z"}`,
		`{"resource":"https://management.azure.com/"}`, `{"node_id":"gpu-n1","address":"127.0.0.1","port":1}`,
		`{"node_id":"` + joinNodeID + `","address":"127.0.0.1","port":5002}`,
		`{"properties":{"computeType":"AmlCompute","properties":{"scaleSettings":{"maxNodeCount":2}}}}`,
		`{"value":[{"id":"/x/workspaces/default/quotas/standardDSv2Family","limit":8}]}`,
		`{"properties":{"image":"python:3.11","isArchived":true}}`,
		`grant_type=client_credentials&client_id=x&client_secret=y&scope=https%3A%2F%2Fmanagement.azure.com%2F.default`,
		`{"scope":"tag:team=a","limit":5,"period":"week","action":"block"}`,
		`{"leaving":"preempted"}`, `null`, `[]`, `{"state":7}`, "\x00\xff", strings.Repeat("[", 1000),
	} {
		for r := range fuzzRoutes {
			f.Add(seed, uint8(r))
		}
	}
	e := newTestEnv(f)
	joinNode(f, e) // cluster gpu, which the ARM PATCH changes
	// The rank messages' jobs run on fz-run; joins are to fz-join, which
	// runs no job.
	maxN := 1
	for _, name := range []string{"fz-run", "fz-join"} {
		if _, _, err := e.svc.CreateOrApplyCompute(context.Background(), "default", &compute.ComputeSpec{Name: name, Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
			f.Fatal(err)
		}
	}
	if err := control.New(e.svc, 1).ReconcileComputes(context.Background()); err != nil {
		f.Fatal(err)
	}
	a := &fuzzAgent{e: e, ctrl: control.New(e.svc, 1), job: "fz-0"}
	a.newNode(f)
	if _, _, err := e.svc.SubmitJob(context.Background(), "default", &job.JobSpec{Name: a.job, Command: "echo hi", Compute: "fz-run"}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		r := fuzzRoutes[int(which)%len(fuzzRoutes)]
		path := r.path
		if strings.Contains(path, "ATT") {
			path = strings.Replace(path, "ATT", a.attempt(t), 1)
		}
		req, _ := http.NewRequest(r.method, e.ts.URL+path, nil)
		switch r.cred {
		case "node":
			req.Header.Set("Authorization", "Bearer "+a.cred)
		case "join":
			token, node := a.joinToken(t)
			req.Header.Set("Authorization", "Bearer "+token)
			body = strings.ReplaceAll(body, joinNodeID, node)
		case "admin":
			req.Header.Set("Authorization", "Bearer "+e.admin)
		}
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", r.ctype)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, path, err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s with %q: %d %s", r.method, path, body, resp.StatusCode, out)
		}
		if r.cred == "join" && resp.StatusCode == http.StatusOK {
			a.joinTk = "" // spent
		}
		if strings.HasPrefix(r.path, "/agent/") {
			var eb struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal(out, &eb)
			switch {
			case resp.StatusCode == http.StatusNotFound && strings.HasPrefix(eb.Error.Message, "no such route"),
				resp.StatusCode == http.StatusMethodNotAllowed:
				t.Fatalf("%s %s is no route: %d %s", r.method, path, resp.StatusCode, out)
			case resp.StatusCode == http.StatusUnauthorized && !strings.Contains(eb.Error.Message, "belongs to another node"):
				// Only a join naming another node than its token's is
				// refused after its body was decoded.
				t.Fatalf("%s %s was refused before its body was read: %d %s", r.method, path, resp.StatusCode, out)
			}
		}
	})
}
