package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
)

// Attack: a datastore's secret reaches the node that runs a job reading
// it, inside the task, and nothing else: not the job as shown, its
// events, the job list or the datastore's own answers. (The server's
// log is not checked here: this server logs nothing on these requests,
// so such a check could not fail.)
func TestDatastoreSecretOnlyInTheTask(t *testing.T) {
	e := newTestEnv(t)
	ts := e.ts
	const secret = "Zm9vYmFyc2VjcmV0LXZhbHVlLTEyMzQ1Ng=="
	mustSendTS(t, ts, e.admin, "PUT", "/api/v1/workspaces/default/datastores/lake",
		`{"type":"azure_blob","account_name":"acct","container_name":"data","credentials":{"account_key":"`+secret+`"}}`, http.StatusCreated)

	ctx := context.Background()
	maxN := 1
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	mustSendTS(t, ts, e.admin, "POST", "/api/v1/workspaces/default/jobs",
		`{"name":"reads-lake","command":"ls ${{inputs.d}}","compute":"cpu","inputs":{"d":{"type":"uri_folder","path":"azureml://datastores/lake/paths/raw/"}}}`, http.StatusCreated)
	ctrl := control.New(e.svc, 1)
	if err := ctrl.ReconcileComputes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctrl.Wait()
	prov := e.prov.TakeProvisioned()
	if len(prov) != 1 {
		t.Fatalf("%d nodes provisioned", len(prov))
	}
	resp, err := e.svc.JoinNode(ctx, prov[0].Req.JoinToken, node.JoinRequest{NodeID: prov[0].Req.Node.ID, Address: "127.0.0.1", Port: 5001})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctrl.Wait()
	syncBody := mustSendTS(t, ts, resp.Credential, "POST", "/agent/v1/sync", `{}`, http.StatusOK)
	if !strings.Contains(syncBody, secret) || !strings.Contains(syncBody, `"input_sources"`) {
		t.Fatalf("the task does not carry the datastore's credentials: %s", syncBody)
	}
	for _, p := range []string{
		"/api/v1/workspaces/default/jobs/reads-lake",
		"/api/v1/workspaces/default/jobs/reads-lake/events",
		"/api/v1/workspaces/default/jobs",
		"/api/v1/workspaces/default/datastores/lake",
		"/api/v1/workspaces/default/datastores",
	} {
		if body := mustSendTS(t, ts, e.admin, "GET", p, "", http.StatusOK); strings.Contains(body, secret) {
			t.Errorf("GET %s shows the secret: %s", p, body)
		}
	}
}

func mustSendTS(t *testing.T, ts *httptest.Server, token, method, path, body string, want int) string {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	return string(b)
}
