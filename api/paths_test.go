package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

const sentinel = "SENTINEL-SECRET"

// plantSecrets writes files that a path escaping the file store (or one of
// its folders) could reach.
func plantSecrets(t *testing.T, e *testEnv) {
	t.Helper()
	for _, p := range []string{
		filepath.Join(e.dir, "etc", "passwd"),
		filepath.Join(e.dir, "etc", "logs"),
		filepath.Join(e.dir, "files", "etc", "passwd"),
		filepath.Join(e.dir, "files", "logs", "etc", "1", "rank-0.log"),
		filepath.Join(e.dir, "files", "outputs", "etc", "1", "rank-0.tar.gz"),
		filepath.Join(e.dir, "files", "logs", "default", "etc", "1", "rank-0.log"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sentinel+"\nroot:x:0:0:root:/root:/bin/sh\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// runJob queues job name on a new compute, provisions and joins its node
// and places the job, so that it has an attempt 1 on rank 0.
func runJob(t *testing.T, e *testEnv, name string) *job.Job {
	t.Helper()
	ctx := context.Background()
	maxN := 1
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	if err := control.New(e.svc, 1).ReconcileComputes(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SubmitJob(ctx, "default", &job.JobSpec{Name: name, Command: "echo hi", Compute: "cpu"}); err != nil {
		t.Fatal(err)
	}
	ctrl := control.New(e.svc, 1)
	pass := func() {
		if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		ctrl.Wait()
	}
	pass()
	for _, p := range e.prov.TakeProvisioned() {
		if _, err := e.svc.JoinNode(ctx, p.Req.JoinToken, node.JoinRequest{NodeID: p.Req.Node.ID, Address: "127.0.0.1", Port: 5001}); err != nil {
			t.Fatal(err)
		}
	}
	pass()
	j, err := e.svc.FindJob(ctx, "default", name)
	if err != nil {
		t.Fatal(err)
	}
	if j.AttemptCount != 1 {
		t.Fatalf("job %s has %d attempts (%s: %s), want 1", name, j.AttemptCount, j.Status, j.StatusReason)
	}
	return j
}

func TestPathTraversalOverHTTP(t *testing.T) {
	e := newTestEnv(t)
	plantSecrets(t, e)
	runJob(t, e, "x")
	if err := e.files.WriteLog("default", "x", 1, 0, 0, []byte("log of x\n")); err != nil {
		t.Fatal(err)
	}
	if err := e.files.PutOutputs("default", "x", 1, 0, strings.NewReader("outputs of x"), 1<<20); err != nil {
		t.Fatal(err)
	}

	// Sanity: the real files are served.
	if r := send(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/x/logs", "", nil); r.status != http.StatusOK || string(r.body) != "log of x\n" {
		t.Fatalf("log of x: %s", r)
	}
	if r := send(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/x/outputs?rank=0", "", nil); r.status != http.StatusOK || string(r.body) != "outputs of x" {
		t.Fatalf("outputs of x: %s", r)
	}

	noSecret := func(what string, r reply) {
		t.Helper()
		if strings.Contains(string(r.body), sentinel) || strings.Contains(string(r.body), "root:") {
			t.Errorf("%s: served a file from outside: %s", what, r)
		}
	}
	want4xx := func(what string, r reply) {
		t.Helper()
		noSecret(what, r)
		if r.status < 400 || r.status >= 500 {
			t.Errorf("%s: %s, want 4xx", what, r)
		}
	}

	// The client follows redirects (the mux cleans paths with "..").
	for _, p := range []string{
		"/api/v1/workspaces/default/jobs/..%2F..%2Fetc/logs",
		"/api/v1/workspaces/default/jobs/..%2F..%2F..%2F..%2Fetc%2Fpasswd/logs",
		"/api/v1/workspaces/default/jobs/..%2Fetc/logs",
		"/api/v1/workspaces/default/jobs/%2E%2E/logs",
		"/api/v1/workspaces/default/jobs/..%5C..%5Cetc/logs",
		"/api/v1/workspaces/default/jobs/etc/logs",
		"/api/v1/workspaces/..%2Fetc/jobs/x/logs",
		"/api/v1/workspaces/..%2F..%2Fetc/jobs/x/logs",
		"/api/v1/workspaces/default/jobs/..%2F..%2Fetc/outputs",
		"/api/v1/workspaces/default/jobs/..%2F..%2Fetc/outputs?rank=0",
		"/api/v1/workspaces/default/jobs/x/outputs?rank=-1",
		"/api/v1/workspaces/default/jobs/x/outputs?rank=1",
		"/api/v1/workspaces/default/jobs/x/outputs?rank=-9999999999",
		"/api/v1/workspaces/default/jobs/x/logs?attempt=-1",
		"/api/v1/workspaces/default/jobs/x/logs?rank=-1",
		"/api/v1/workspaces/default/jobs/x/logs?rank=..%2F..%2Fetc",
	} {
		r := send(t, e, e.admin, "GET", p, "", nil)
		noSecret("GET "+p, r)
		if r.status == http.StatusOK && len(r.body) > 0 && !strings.Contains(p, "/jobs/x/") {
			t.Errorf("GET %s: %s, want no content", p, r)
		}
		if strings.Contains(p, "outputs") {
			want4xx("GET "+p, r)
		}
	}

	// Agent routes: a bogus credential is refused before any path is used.
	for _, p := range []string{
		"/agent/v1/artifacts/..%2F..%2Fetc%2Fpasswd",
		"/agent/v1/artifacts/sha256:..%2F..%2Fetc",
		"/agent/v1/artifacts/%2Fetc%2Fpasswd",
		"/agent/v1/attempts/..%2F..%2Fetc/ranks/0/restore",
	} {
		r := send(t, e, "shoal_bogus", "GET", p, "", nil)
		noSecret("GET "+p, r)
		if r.status != http.StatusUnauthorized {
			t.Errorf("GET %s with a bogus credential: %s, want 401", p, r)
		}
	}
}

// With a real node credential, artifact IDs that try to escape are still
// refused: the node's job does not use them.
func TestAgentArtifactTraversal(t *testing.T) {
	e := newTestEnv(t)
	plantSecrets(t, e)
	_, cred := joinNode(t, e)
	for _, p := range []string{
		"/agent/v1/artifacts/..%2F..%2Fetc%2Fpasswd",
		"/agent/v1/artifacts/sha256:..%2F..%2Fetc",
		"/agent/v1/artifacts/%2Fetc%2Fpasswd",
		"/agent/v1/artifacts/sha256:" + strings.Repeat("0", 64),
	} {
		r := send(t, e, cred, "GET", p, "", nil)
		if strings.Contains(string(r.body), sentinel) {
			t.Errorf("GET %s: served a file from outside: %s", p, r)
		}
		if r.status < 400 || r.status >= 500 {
			t.Errorf("GET %s with a node credential: %s, want 4xx", p, r)
		}
	}
	for _, p := range []string{
		"/agent/v1/attempts/..%2F..%2Fetc/ranks/0/restore",
		"/agent/v1/attempts/x/ranks/-1/restore",
		"/agent/v1/attempts/x/ranks/..%2F1/restore",
	} {
		r := send(t, e, cred, "GET", p, "", nil)
		if strings.Contains(string(r.body), sentinel) || r.status < 400 || r.status >= 500 {
			t.Errorf("GET %s with a node credential: %s, want 4xx", p, r)
		}
	}
}
