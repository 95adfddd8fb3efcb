package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/control"
)

const mlflowBase = "/mlflow/v1/workspaces/default/api/2.0/mlflow/"

// runningJobToken joins a node, lets the controller start job j-gpu on it
// and returns the tracking token the node's sync hands the rank, with the
// node's credential and the task's attempt.
func runningJobToken(t *testing.T, e *testEnv) (token, cred, attempt string) {
	t.Helper()
	_, cred = joinNode(t, e)
	ctrl := control.New(e.svc, 1)
	if err := ctrl.RunOnce(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	ctrl.Wait()
	var resp shoal.AgentSyncResponse
	if err := json.Unmarshal(mustSend(t, e, cred, "POST", "/agent/v1/sync", `{}`, http.StatusOK).body, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Start) != 1 || resp.Start[0].JobName != "j-gpu" {
		t.Fatalf("the node's sync started %d tasks, want j-gpu's", len(resp.Start))
	}
	task := resp.Start[0]
	if task.Tracking == nil || task.Tracking.Token == "" || task.Tracking.ExperimentName != shoal.DefaultExperiment {
		t.Fatalf("j-gpu's task carries tracking %+v, want a token and experiment Default", task.Tracking)
	}
	return task.Tracking.Token, cred, task.AttemptID
}

// mlflowError checks an MLflow error answer: the status and error_code.
func wantMLflowError(t *testing.T, what string, r reply, status int, code string) {
	t.Helper()
	var body struct {
		Code    string `json:"error_code"`
		Message string `json:"message"`
	}
	if r.status != status || json.Unmarshal(r.body, &body) != nil || body.Code != code || body.Message == "" {
		t.Errorf("%s: %s, want %d with error_code %s and a message", what, r, status, code)
	}
}

// The attacks on the tracking API, written first: a job's token writing
// another job's run is 403, and so is reading it; a token whose attempt
// ended is 401; a forged or altered token is 401; a Reader may read a run
// and may not write it (403); a job's token is no API credential.
func TestMLflowTokenReachesOnlyItsRunWhileItsAttemptLives(t *testing.T) {
	e := newTestEnv(t)
	token, cred, attempt := runningJobToken(t, e)
	if _, _, err := e.svc.SubmitJob(context.Background(), "default", &shoal.JobSpec{Name: "other", Command: "echo hi", Compute: "gpu"}); err != nil {
		t.Fatal(err)
	}
	metric := func(run string) string {
		return `{"run_id":"` + run + `","key":"loss","value":0.5,"timestamp":1700000000000,"step":1}`
	}
	// Its own run: written and read.
	mustSend(t, e, token, "POST", mlflowBase+"runs/log-metric", metric("j-gpu"), http.StatusOK)
	mustSend(t, e, token, "GET", mlflowBase+"runs/get?run_id=j-gpu", "", http.StatusOK)

	// Another job's run: neither written nor read.
	wantMLflowError(t, "a job's token writing another job's run",
		send(t, e, token, "POST", mlflowBase+"runs/log-metric", metric("other"), nil), http.StatusForbidden, "PERMISSION_DENIED")
	wantMLflowError(t, "a job's token logging a batch to another job's run",
		send(t, e, token, "POST", mlflowBase+"runs/log-batch", `{"run_id":"other","params":[{"key":"a","value":"b"}]}`, nil), http.StatusForbidden, "PERMISSION_DENIED")
	wantMLflowError(t, "a job's token reading another job's run",
		send(t, e, token, "GET", mlflowBase+"runs/get?run_id=other", "", nil), http.StatusForbidden, "PERMISSION_DENIED")
	wantMLflowError(t, "a job's token reading another experiment",
		send(t, e, token, "GET", mlflowBase+"experiments/get-by-name?experiment_name=secret", "", nil), http.StatusForbidden, "PERMISSION_DENIED")
	// Another workspace's path: refused before any lookup.
	if r := send(t, e, token, "POST", "/mlflow/v1/workspaces/elsewhere/api/2.0/mlflow/runs/log-metric", metric("j-gpu"), nil); r.status != http.StatusForbidden {
		t.Errorf("a job's token on another workspace: %s, want 403", r)
	}
	// It is no credential of the native API.
	if r := send(t, e, token, "GET", "/api/v1/workspaces/default/jobs/j-gpu", "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("a tracking token on the native API: %s, want 401", r)
	}

	// Forged: another attempt's ID with this token's MAC, or a MAC altered.
	mac := token[strings.LastIndexByte(token, '_'):]
	for what, forged := range map[string]string{
		"another attempt's ID": "shoalrun_att-0000000000000000" + mac,
		"an altered MAC":       token[:len(token)-1] + string("01"[(token[len(token)-1]+1)%2]),
		"no MAC":               "shoalrun_" + attempt,
	} {
		wantMLflowError(t, "a token with "+what, send(t, e, forged, "POST", mlflowBase+"runs/log-metric", metric("j-gpu"), nil), http.StatusUnauthorized, "UNAUTHENTICATED")
	}

	// A Reader reads the run and may not write it; a Contributor may.
	reader := addUser(t, e, "rita", shoal.RoleReader)
	got := mustSend(t, e, reader, "GET", mlflowBase+"metrics/get-history?run_id=j-gpu&metric_key=loss", "", http.StatusOK)
	if !strings.Contains(string(got.body), `"value":0.5`) {
		t.Errorf("the Reader's history: %s", got)
	}
	wantMLflowError(t, "a Reader writing a run",
		send(t, e, reader, "POST", mlflowBase+"runs/log-metric", metric("j-gpu"), nil), http.StatusForbidden, "PERMISSION_DENIED")
	wantMLflowError(t, "a Reader setting a tag",
		send(t, e, reader, "POST", mlflowBase+"runs/set-tag", `{"run_id":"j-gpu","key":"k","value":"v"}`, nil), http.StatusForbidden, "PERMISSION_DENIED")
	contributor := addUser(t, e, "carl", shoal.RoleContributor)
	mustSend(t, e, contributor, "POST", mlflowBase+"runs/set-tag", `{"run_id":"j-gpu","key":"reviewed","value":"yes"}`, http.StatusOK)
	outsider := addUser(t, e, "olga", "")
	wantMLflowError(t, "a user without a role reading a run",
		send(t, e, outsider, "GET", mlflowBase+"runs/get?run_id=j-gpu", "", nil), http.StatusForbidden, "PERMISSION_DENIED")
	wantMLflowError(t, "no credential", send(t, e, "", "GET", mlflowBase+"runs/get?run_id=j-gpu", "", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// The attempt ends: its token is refused from then on.
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+attempt+"/ranks/0/status", `{"state":"Running"}`, http.StatusOK)
	mustSend(t, e, token, "POST", mlflowBase+"runs/log-metric", metric("j-gpu"), http.StatusOK)
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+attempt+"/ranks/0/status", `{"state":"Completed","exit_code":0}`, http.StatusOK)
	wantMLflowError(t, "an ended attempt's token",
		send(t, e, token, "POST", mlflowBase+"runs/log-metric", metric("j-gpu"), nil), http.StatusUnauthorized, "UNAUTHENTICATED")
	wantMLflowError(t, "an ended attempt's token reading",
		send(t, e, token, "GET", mlflowBase+"runs/get?run_id=j-gpu", "", nil), http.StatusUnauthorized, "UNAUTHENTICATED")
}
