package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/domain/node"
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
	var resp node.AgentSyncResponse
	if err := json.Unmarshal(mustSend(t, e, cred, "POST", "/agent/v1/sync", `{}`, http.StatusOK).body, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Start) != 1 || resp.Start[0].JobName != "j-gpu" {
		t.Fatalf("the node's sync started %d tasks, want j-gpu's", len(resp.Start))
	}
	task := resp.Start[0]
	if task.Tracking == nil || task.Tracking.Token == "" || task.Tracking.ExperimentName != mlflowrun.DefaultExperiment {
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
	if _, _, err := e.svc.SubmitJob(context.Background(), "default", &job.JobSpec{Name: "other", Command: "echo hi", Compute: "gpu"}); err != nil {
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
	reader := addUser(t, e, "rita", identity.RoleReader)
	got := mustSend(t, e, reader, "GET", mlflowBase+"metrics/get-history?run_id=j-gpu&metric_key=loss", "", http.StatusOK)
	if !strings.Contains(string(got.body), `"value":0.5`) {
		t.Errorf("the Reader's history: %s", got)
	}
	wantMLflowError(t, "a Reader writing a run",
		send(t, e, reader, "POST", mlflowBase+"runs/log-metric", metric("j-gpu"), nil), http.StatusForbidden, "PERMISSION_DENIED")
	wantMLflowError(t, "a Reader setting a tag",
		send(t, e, reader, "POST", mlflowBase+"runs/set-tag", `{"run_id":"j-gpu","key":"k","value":"v"}`, nil), http.StatusForbidden, "PERMISSION_DENIED")
	contributor := addUser(t, e, "carl", identity.RoleContributor)
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

// A run's limits and MLflow's rules, in MLflow's error shape: a batch
// past the distinct metric keys is RESOURCE_LIMIT_EXCEEDED and writes
// nothing; a parameter set again to another value, a NaN, an empty key
// are INVALID_PARAMETER_VALUE naming the field; a run that is no job is
// RESOURCE_DOES_NOT_EXIST; a user's runs/create is refused; an unknown
// call is ENDPOINT_NOT_FOUND.
func TestMLflowLimitsAndRules(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	maxN := 1
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SubmitJob(ctx, "default", &job.JobSpec{Name: "j1", Command: "echo hi", Compute: "cpu", ExperimentName: "mnist"}); err != nil {
		t.Fatal(err)
	}
	tok := addUser(t, e, "carl", identity.RoleContributor)
	var metrics []string
	for i := range mlflowrun.MaxRunMetricKeys + 1 {
		metrics = append(metrics, `{"key":"m`+strconv.Itoa(i)+`","value":1,"timestamp":1,"step":0}`)
	}
	wantMLflowError(t, "a batch past the metric keys",
		send(t, e, tok, "POST", mlflowBase+"runs/log-batch", `{"run_id":"j1","metrics":[`+strings.Join(metrics, ",")+`],"params":[{"key":"p","value":"v"}]}`, nil),
		http.StatusBadRequest, "RESOURCE_LIMIT_EXCEEDED")
	run := mustSend(t, e, tok, "GET", mlflowBase+"runs/get?run_id=j1", "", http.StatusOK)
	if !strings.Contains(string(run.body), `"metrics":[]`) || !strings.Contains(string(run.body), `"params":[]`) || !strings.Contains(string(run.body), `"experiment_id":"mnist"`) {
		t.Errorf("after a refused batch the run holds: %s", run)
	}
	mustSend(t, e, tok, "POST", mlflowBase+"runs/log-batch", `{"run_id":"j1","metrics":[`+strings.Join(metrics[:mlflowrun.MaxRunMetricKeys], ",")+`]}`, http.StatusOK)

	mustSend(t, e, tok, "POST", mlflowBase+"runs/log-parameter", `{"run_id":"j1","key":"lr","value":"0.01"}`, http.StatusOK)
	mustSend(t, e, tok, "POST", mlflowBase+"runs/log-parameter", `{"run_id":"j1","key":"lr","value":"0.01"}`, http.StatusOK)
	for what, body := range map[string]string{
		"a parameter set again to another value": `{"run_id":"j1","key":"lr","value":"0.1"}`,
	} {
		wantMLflowError(t, what, send(t, e, tok, "POST", mlflowBase+"runs/log-parameter", body, nil), http.StatusBadRequest, "INVALID_PARAMETER_VALUE")
	}
	for what, body := range map[string]string{
		"a NaN":      `{"run_id":"j1","key":"loss","value":"NaN","timestamp":1,"step":0}`,
		"no key":     `{"run_id":"j1","key":"","value":1,"timestamp":1,"step":0}`,
		"a key ../x": `{"run_id":"j1","key":"../x","value":1,"timestamp":1,"step":0}`,
	} {
		wantMLflowError(t, what, send(t, e, tok, "POST", mlflowBase+"runs/log-metric", body, nil), http.StatusBadRequest, "INVALID_PARAMETER_VALUE")
	}
	// protobuf's JSON writes int64 as strings: accepted.
	mustSend(t, e, tok, "POST", mlflowBase+"runs/log-metric", `{"run_id":"j1","key":"m0","value":"2.5","timestamp":"1700000000000","step":"3"}`, http.StatusOK)
	wantMLflowError(t, "a run that is no job", send(t, e, tok, "GET", mlflowBase+"runs/get?run_id=nope", "", nil), http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST")
	wantMLflowError(t, "a user's runs/create", send(t, e, tok, "POST", mlflowBase+"runs/create", `{"experiment_id":"mnist"}`, nil), http.StatusBadRequest, "INVALID_PARAMETER_VALUE")
	wantMLflowError(t, "an unknown call", send(t, e, tok, "POST", mlflowBase+"model-versions/create", `{}`, nil), http.StatusNotFound, "ENDPOINT_NOT_FOUND")
	wantMLflowError(t, "an experiment never recorded", send(t, e, tok, "GET", mlflowBase+"experiments/get-by-name?experiment_name=mnist", "", nil), http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST")
	mustSend(t, e, tok, "POST", mlflowBase+"experiments/create", `{"name":"mnist"}`, http.StatusOK)
	wantMLflowError(t, "an experiment created twice", send(t, e, tok, "POST", mlflowBase+"experiments/create", `{"name":"MNIST"}`, nil), http.StatusBadRequest, "RESOURCE_ALREADY_EXISTS")
	found := mustSend(t, e, tok, "POST", mlflowBase+"runs/search", `{"experiment_ids":["mnist"]}`, http.StatusOK)
	if !strings.Contains(string(found.body), `"run_id":"j1"`) {
		t.Errorf("runs/search of mnist: %s", found)
	}
	wantMLflowError(t, "a search with a filter", send(t, e, tok, "POST", mlflowBase+"runs/search", `{"experiment_ids":["mnist"],"filter":"metrics.loss < 1"}`, nil), http.StatusBadRequest, "INVALID_PARAMETER_VALUE")
}
