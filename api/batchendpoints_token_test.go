package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/service/parallel"
	"github.com/shoal-ml/shoal/store"
)

// Attack: an endpoint's invoke token does one thing: invoke that
// endpoint, as the user who made it (the job is theirs). It cannot
// invoke another endpoint, read or change anything (the endpoint, jobs,
// computes, its user's tokens), make tokens, or outlive revocation;
// a Reader cannot make one, and the user's own rights still apply.
func TestBatchInvokeTokenScope(t *testing.T) {
	e := newTestEnv(t)
	code := batchSetup(t, e)
	const base = "/api/v1/workspaces/default/batch-endpoints"
	carl := addUser(t, e, "carl", identity.RoleContributor)
	reader := addUser(t, e, "rita", identity.RoleReader)
	for _, ep := range []string{"digits", "other"} {
		mustSend(t, e, carl, "PUT", base+"/"+ep, `{"name":"`+ep+`"}`, http.StatusCreated)
		mustSend(t, e, carl, "PUT", base+"/"+ep+"/deployments/torch", strings.Replace(deploymentDoc(code, ""), `"digits"`, `"`+ep+`"`, 1), http.StatusCreated)
	}
	if r := send(t, e, reader, "POST", base+"/digits/tokens", `{}`, nil); r.status != http.StatusForbidden {
		t.Errorf("a Reader made an invoke token: %s", r)
	}
	if r := send(t, e, carl, "POST", base+"/digits/tokens", `{"expires_in_days":9999}`, nil); r.status != 400 || errTarget(t, r) != "expires_in" {
		t.Errorf("a token for 9999 days: %s", r)
	}
	out := mustSend(t, e, carl, "POST", base+"/digits/tokens", `{"expires_in_days":30}`, http.StatusCreated).json(t)
	tok, _ := out["token"].(string)
	id, _ := out["id"].(string)
	if !strings.HasPrefix(tok, identity.TokenPrefix) || out["scope"] != "workspaces/default/batchendpoints/digits" {
		t.Fatalf("token: %v", out)
	}
	input := `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"}}`
	j := mustSend(t, e, tok, "POST", base+"/digits/invoke", input, http.StatusCreated).json(t)
	if j["created_by"] != "carl" {
		t.Errorf("the invoked job is not its user's: %v", j)
	}
	scoring := `{"properties":{"inputData":{"UriFolder":{"jobInputType":"UriFolder","uri":"azureml://datastores/workspaceblobstore/paths/digits/"}}}}`
	mustSend(t, e, tok, "POST", base+"/digits/jobs", scoring, http.StatusOK)
	for _, c := range []struct{ method, path, body string }{
		{"POST", base + "/other/invoke", input},
		{"POST", base + "/other/jobs", scoring},
		{"POST", base + "/DIGITS-2/invoke", input},
		{"GET", base + "/digits", ""},
		{"GET", base + "/digits/jobs", ""},
		{"PUT", base + "/digits", `{"name":"digits"}`},
		{"DELETE", base + "/digits/deployments/torch", ""},
		{"POST", base + "/digits/tokens", `{}`},
		{"GET", "/api/v1/workspaces/default/jobs", ""},
		{"GET", "/api/v1/workspaces/default/jobs/" + j["name"].(string), ""},
		{"POST", "/api/v1/workspaces/default/jobs", `{"command":"id","compute":"cpu"}`},
		{"GET", "/api/v1/workspaces/default/computes", ""},
		{"POST", "/api/v1/users/carl/tokens", `{"name":"more"}`},
		{"GET", "/api/v1/whoami", ""},
		{"GET", armWS + "/batchEndpoints/digits?api-version=2022-05-01", ""},
		// MLflow's routes authorize in the access service, not the route table.
		{"GET", "/mlflow/v1/workspaces/default/api/2.0/mlflow/experiments/search", ""},
	} {
		if r := send(t, e, tok, c.method, c.path, c.body, nil); r.status != http.StatusForbidden {
			t.Errorf("the invoke token %s %s: %s, want 403", c.method, c.path, r)
		}
	}
	// Revoked with the user's other tokens: then nothing.
	mustSend(t, e, carl, "POST", "/api/v1/tokens/"+id+"/revoke", "", http.StatusOK)
	if r := send(t, e, tok, "POST", base+"/digits/invoke", input, nil); r.status != http.StatusUnauthorized {
		t.Errorf("a revoked invoke token: %s, want 401", r)
	}
	// A user whose role is taken away cannot invoke with an old token.
	rtok := mustSend(t, e, carl, "POST", base+"/digits/tokens", `{}`, http.StatusCreated).json(t)["token"].(string)
	mustSend(t, e, e.admin, "DELETE", "/api/v1/workspaces/default/roleassignments?principal=user:carl&role=Contributor", "", http.StatusNoContent)
	if r := send(t, e, rtok, "POST", base+"/digits/invoke", input, nil); r.status != http.StatusForbidden {
		t.Errorf("an invoke token of a user without a role: %s, want 403", r)
	}
}

// Azure ML's audience (https://ml.azure.com), which azure-ai-ml asks for
// to invoke a batch endpoint, is taken on a scoring URI and nowhere else:
// not by the native invoke, the endpoint's other routes, jobs, or ARM.
func TestBatchScoringURIAudience(t *testing.T) {
	e := newTestEnv(t)
	code := batchSetup(t, e)
	const base = "/api/v1/workspaces/default/batch-endpoints"
	mustSend(t, e, e.admin, "PUT", base+"/digits", `{"name":"digits"}`, http.StatusCreated)
	mustSend(t, e, e.admin, "PUT", base+"/digits/deployments/torch", deploymentDoc(code, ""), http.StatusCreated)
	created := mustSend(t, e, e.admin, "POST", "/api/v1/serviceprincipals", `{"name":"svc"}`, http.StatusCreated).json(t)
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/roleassignments", `{"principal":"sp:svc","role":"Contributor"}`, http.StatusCreated)
	status, body := postToken(t, e, "/adfs/oauth2/token", grant(created["client_id"].(string), created["client_secret"].(string), "https://ml.azure.com/.default"))
	tok, _ := body["access_token"].(string)
	if status != 200 || tok == "" {
		t.Fatalf("token: %d %v", status, body)
	}
	scoring := `{"properties":{"inputData":{"UriFolder":{"jobInputType":"UriFolder","uri":"azureml://datastores/workspaceblobstore/paths/digits/"}}}}`
	mustSend(t, e, tok, "POST", base+"/digits/jobs", scoring, http.StatusOK)
	for _, c := range []struct{ method, path, body string }{
		{"POST", base + "/digits/invoke", `{"input":{"path":"azureml://datastores/workspaceblobstore/paths/digits/"}}`},
		{"GET", base + "/digits/jobs", ""},
		{"GET", base + "/digits", ""},
		{"POST", base + "/digits/jobs/x", scoring},
		{"GET", "/api/v1/workspaces/default/jobs", ""},
		{"GET", armWS + "/batchEndpoints/digits?api-version=2022-05-01", ""},
	} {
		if r := send(t, e, tok, c.method, c.path, c.body, nil); r.status != http.StatusUnauthorized && r.status != http.StatusNotFound {
			t.Errorf("an Azure ML token %s %s: %s, want 401", c.method, c.path, r)
		}
	}
}

// Attack: a parallel job's ledger token, which the job's own code can
// read (it runs as the same account as the driver), opens that job's
// ledger and nothing else: not the job, its logs, other jobs, MLflow or
// a batch endpoint. No user's token, an administrator's included, opens
// a ledger.
func TestParallelLedgerTokenScope(t *testing.T) {
	e := newTestEnv(t)
	err := e.store.Update(t.Context(), func(tx store.Tx) error {
		j := &job.Job{Workspace: "default", JobSpec: job.JobSpec{Name: "pj", Command: job.ParallelCommand(""), Compute: "cpu", Parallel: &job.ParallelSpec{}},
			Status: job.JobRunning, CreatedOn: tx.Now(), CurrentAttemptID: "att-pj", AttemptCount: 1, Version: 1}
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		return tx.InsertAttempt(&job.Attempt{ID: "att-pj", Workspace: "default", JobName: "pj", Number: 1, Status: job.AttemptRunning,
			CreatedOn: tx.Now(), Ranks: []*job.RankStatus{{Rank: 0, NodeID: "n", Status: job.AttemptRunning}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	tok := parallel.Token(e.svc.SecretsKey(), "att-pj")
	ledger := pproto.PathPrefix + "att-pj" + pproto.PathProgress
	mustSend(t, e, tok, "GET", ledger, "", http.StatusOK)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/workspaces/default/jobs/pj"},
		{"GET", "/api/v1/workspaces/default/jobs"},
		{"GET", "/api/v1/whoami"},
		{"POST", "/api/v1/workspaces/default/batch-endpoints/digits/invoke"},
		{"GET", "/mlflow/v1/workspaces/default/api/2.0/mlflow/experiments/search"},
	} {
		if r := send(t, e, tok, c.method, c.path, "", nil); r.status != http.StatusUnauthorized {
			t.Errorf("the ledger token %s %s: %s, want 401", c.method, c.path, r)
		}
	}
	if r := send(t, e, e.admin, "GET", ledger, "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("an administrator's token on a ledger: %s, want 401", r)
	}
}
