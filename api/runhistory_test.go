package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api/runhistory"
	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/domain/node"
)

// historyWS is run history's path of the default workspace, as
// azure-ai-ml's run history client builds it.
const historyWS = "/history/v1.0/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"

// runDetails reads a run's details as azure-ai-ml does.
type runDetails struct {
	RunID     string            `json:"runId"`
	Status    string            `json:"status"`
	Target    string            `json:"target"`
	LogFiles  map[string]string `json:"logFiles"`
	StartTime *time.Time        `json:"startTimeUtc"`
	EndTime   *time.Time        `json:"endTimeUtc"`
	Warnings  []struct {
		Message string `json:"message"`
	} `json:"warnings"`
	Error *struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"error"`
}

func getDetails(t *testing.T, e *testEnv, token, run string) runDetails {
	t.Helper()
	var d runDetails
	if err := json.Unmarshal(mustSend(t, e, token, "GET", historyWS+"/runs/"+run+"/details", "", http.StatusOK).body, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// logPath is a log URL of run details on the test server: the details
// name the server's public URL (http://shoal.test), the test server
// listens elsewhere.
func logPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host != "shoal.test" {
		t.Fatalf("log URL %q is not under the public URL", raw)
	}
	return u.RequestURI()
}

// TestRunHistoryFollowsAJob: what azure-ai-ml's jobs.stream reads, in
// order: the workspace's discoveryUrl, the discovery document (no
// credential), the run's details (status in Azure's values, the rank's
// log under Azure's name, times, target) and the log URL, which reads
// without a credential the text `shoal job logs` shows; the same log
// under the run's path with a bearer; the run, its run data and its
// children; a failed run's error in run history's words.
func TestRunHistoryFollowsAJob(t *testing.T) {
	e := newTestEnv(t)
	reader := addUser(t, e, "rita", identity.RoleReader)
	var ws struct {
		Properties struct {
			DiscoveryURL string `json:"discoveryUrl"`
		} `json:"properties"`
	}
	json.Unmarshal(mustSend(t, e, reader, "GET", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default?api-version=2023-04-01", "", http.StatusOK).body, &ws)
	if ws.Properties.DiscoveryURL != "http://shoal.test/discovery" {
		t.Fatalf("discoveryUrl %q, want the server's /discovery", ws.Properties.DiscoveryURL)
	}
	var disc map[string]string
	json.Unmarshal(mustSend(t, e, "", "GET", "/discovery", "", http.StatusOK).body, &disc)
	if disc["api"] != "http://shoal.test" || disc["history"] != "http://shoal.test" {
		t.Fatalf("discovery document %v", disc)
	}

	_, cred, attempt := runningJobToken(t, e)
	if d := getDetails(t, e, reader, "j-gpu"); len(d.LogFiles) != 1 || d.Status != job.JobQueued && d.Status != job.JobPreparing && d.Status != job.JobRunning {
		t.Fatalf("details of a started job: %+v", d)
	}
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+attempt+"/ranks/0/status", `{"state":"Running"}`, http.StatusOK)
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+attempt+"/ranks/0/logs?offset=0", "epoch 1 loss 0.5\n", http.StatusNoContent)
	d := getDetails(t, e, reader, "j-gpu")
	if d.RunID != "j-gpu" || d.Status != job.JobRunning || d.Target != "gpu" || d.StartTime == nil || d.EndTime != nil || d.Error != nil {
		t.Errorf("details of a running job: %+v", d)
	}
	logURL, ok := d.LogFiles["user_logs/std_log.txt"]
	if len(d.LogFiles) != 1 || !ok {
		t.Fatalf("logFiles %v, want user_logs/std_log.txt alone", d.LogFiles)
	}
	native := mustSend(t, e, reader, "GET", "/api/v1/workspaces/default/jobs/j-gpu/logs", "", http.StatusOK).body
	if string(native) != "epoch 1 loss 0.5\n" {
		t.Fatalf("shoal job logs shows %q", native)
	}
	// azure-ai-ml downloads the URL with no credential.
	if got := mustSend(t, e, "", "GET", logPath(t, logURL), "", http.StatusOK).body; string(got) != string(native) {
		t.Errorf("the log URL reads %q, shoal job logs %q", got, native)
	}
	if got := mustSend(t, e, reader, "GET", historyWS+"/runs/j-gpu/logs/user_logs/std_log.txt", "", http.StatusOK).body; string(got) != string(native) {
		t.Errorf("the log under the run's path reads %q", got)
	}

	// The run and its run data, as jobs.get of a child and jobs.download
	// read them; a command job has no children.
	var run struct {
		RunID        string `json:"runId"`
		Status       string `json:"status"`
		ExperimentID string `json:"experimentId"`
		Compute      struct {
			Target string `json:"target"`
		} `json:"compute"`
	}
	json.Unmarshal(mustSend(t, e, reader, "GET", historyWS+"/runs/j-gpu", "", http.StatusOK).body, &run)
	if run.RunID != "j-gpu" || run.Status != job.JobRunning || run.Compute.Target != "gpu" || run.ExperimentID != mlflowrun.DefaultExperiment {
		t.Errorf("run %+v", run)
	}
	var data struct {
		RunMetadata struct {
			RunID   string         `json:"runId"`
			Outputs map[string]any `json:"outputs"`
		} `json:"runMetadata"`
	}
	json.Unmarshal(mustSend(t, e, reader, "POST", historyWS+"/rundata", `{"runId":"j-gpu","selectRunMetadata":true}`, http.StatusOK).body, &data)
	if data.RunMetadata.RunID != "j-gpu" || data.RunMetadata.Outputs != nil {
		t.Errorf("run data %+v", data)
	}
	if got := string(mustSend(t, e, reader, "GET", historyWS+"/runs/j-gpu/children", "", http.StatusOK).body); strings.TrimSpace(got) != `{"value":[]}` {
		t.Errorf("children of a command job: %s", got)
	}

	// It fails: the error in run history's words, the end time set.
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+attempt+"/ranks/0/status", `{"state":"Failed","exit_code":3}`, http.StatusOK)
	d = getDetails(t, e, reader, "j-gpu")
	if d.Status != job.JobFailed || d.EndTime == nil || d.Error == nil || d.Error.Error.Code != "UserError" || !strings.Contains(d.Error.Error.Message, "3") {
		t.Errorf("details of a failed job: %+v (error %+v)", d, d.Error)
	}
	if got := mustSend(t, e, "", "GET", logPath(t, d.LogFiles["user_logs/std_log.txt"]), "", http.StatusOK).body; string(got) != string(native) {
		t.Errorf("the failed job's log URL reads %q", got)
	}
}

// TestRunHistoryRanksAndWarnings: a two-instance job's details name
// each rank's log as Azure does (std_log_process_<rank>.txt), each URL
// reads its own rank's log; a first attempt has no warnings.
func TestRunHistoryRanksAndWarnings(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	maxN := 2
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SubmitJob(ctx, "default", &job.JobSpec{Name: "dist", Command: "echo hi", Compute: "cpu", Resources: &job.JobResources{InstanceCount: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := e.files.WriteLog("default", "dist", 1, 0, 0, []byte("rank zero\n")); err != nil {
		t.Fatal(err)
	}
	if err := e.files.WriteLog("default", "dist", 1, 1, 0, []byte("rank one\n")); err != nil {
		t.Fatal(err)
	}
	placeAll(t, e)
	d := getDetails(t, e, e.admin, "dist")
	if len(d.LogFiles) != 2 {
		t.Fatalf("logFiles of a two-rank job: %v", d.LogFiles)
	}
	for file, want := range map[string]string{"user_logs/std_log_process_0.txt": "rank zero\n", "user_logs/std_log_process_1.txt": "rank one\n"} {
		if got := mustSend(t, e, "", "GET", logPath(t, d.LogFiles[file]), "", http.StatusOK).body; string(got) != want {
			t.Errorf("%s reads %q, want %q", file, got, want)
		}
	}
	if len(d.Warnings) != 0 {
		t.Errorf("warnings of a first attempt: %+v", d.Warnings)
	}
}

// placeAll runs the controller until the fake provider's nodes joined
// and the queued jobs are placed.
func placeAll(t *testing.T, e *testEnv) {
	t.Helper()
	ctx := context.Background()
	for range 3 {
		ctrl := control.New(e.svc, 1)
		if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		ctrl.Wait()
		for _, p := range e.prov.TakeProvisioned() {
			if _, err := e.svc.JoinNode(ctx, p.Req.JoinToken, node.JoinRequest{NodeID: p.Req.Node.ID, Address: "127.0.0.1", Port: 5001}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRunHistoryAttacks, written first: a run of another workspace is
// refused (403 where the caller holds no role, 404 under a workspace's
// path where it is not); a log URL without a signature is 401; a forged
// signature, one for another job, another file or another workspace, an
// expired one, are 403; job names and file names that try to leave the
// job's logs read nothing.
func TestRunHistoryAttacks(t *testing.T) {
	e := newTestEnv(t)
	plantSecrets(t, e)
	runJob(t, e, "x")
	if err := e.files.WriteLog("default", "x", 1, 0, 0, []byte("log of x\n")); err != nil {
		t.Fatal(err)
	}
	carl := secretTeam(t, e)
	ctx := context.Background()
	maxN := 1
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "secret-team", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SubmitJob(ctx, "secret-team", &job.JobSpec{Name: "theirs", Command: "echo secret", Compute: "cpu"}); err != nil {
		t.Fatal(err)
	}
	secretWS := strings.Replace(historyWS, "/workspaces/default", "/workspaces/secret-team", 1)
	for _, p := range []string{"/runs/theirs/details", "/runs/theirs", "/runs/theirs/children", "/runs/theirs/logs/user_logs/std_log.txt"} {
		if r := send(t, e, carl, "GET", secretWS+p, "", nil); r.status != http.StatusForbidden {
			t.Errorf("GET %s of another workspace: %s, want 403", p, r)
		}
		if r := send(t, e, carl, "GET", historyWS+p, "", nil); r.status != http.StatusNotFound {
			t.Errorf("GET %s of another workspace's run under ours: %s, want 404", p, r)
		}
	}
	if r := send(t, e, carl, "POST", historyWS+"/rundata", `{"runId":"theirs"}`, nil); r.status != http.StatusNotFound {
		t.Errorf("run data of another workspace's run under ours: %s, want 404", r)
	}
	if r := send(t, e, "", "GET", historyWS+"/runs/x/details", "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("details without a credential: %s, want 401", r)
	}

	good := logPath(t, getDetails(t, e, carl, "x").LogFiles["user_logs/std_log.txt"])
	if got := mustSend(t, e, "", "GET", good, "", http.StatusOK).body; string(got) != "log of x\n" {
		t.Fatalf("the signed URL reads %q", got)
	}
	u, _ := url.Parse(good)
	q := u.Query()
	key := e.svc.SecretsKey()
	soon := time.Now().Add(time.Hour)
	x, err := e.svc.FindJob(ctx, "default", "x")
	if err != nil {
		t.Fatal(err)
	}
	signedAt := func(created time.Time, ws, jobName, file string, expires time.Time) string {
		return "/history/v1.0/logs/" + url.PathEscape(ws) + "/" + url.PathEscape(jobName) + "/" + file + "?" + runhistory.SignLog(key, ws, jobName, created, file, expires)
	}
	signed := func(ws, jobName, file string, expires time.Time) string {
		return signedAt(x.CreatedOn, ws, jobName, file, expires)
	}
	for _, c := range []struct {
		what, path string
		status     int
	}{
		{"no signature", u.Path, http.StatusUnauthorized},
		{"a forged signature", u.Path + "?se=" + q.Get("se") + "&sig=" + strings.Repeat("A", 43), http.StatusForbidden},
		{"a signature that is no base64", u.Path + "?se=" + q.Get("se") + "&sig=%00%01", http.StatusForbidden},
		{"a later expiry than signed", u.Path + "?se=99999999999&sig=" + q.Get("sig"), http.StatusForbidden},
		{"x's signature on another job", strings.Replace(u.Path, "/x/", "/theirs/", 1) + "?" + u.RawQuery, http.StatusForbidden},
		{"x's signature on another workspace", strings.Replace(u.Path, "/default/", "/secret-team/", 1) + "?" + u.RawQuery, http.StatusForbidden},
		{"x's signature on another file", strings.Replace(u.Path, "std_log.txt", "std_log_process_1.txt", 1) + "?" + u.RawQuery, http.StatusForbidden},
		{"an expired signature", signed("default", "x", "user_logs/std_log.txt", time.Unix(1_700_000_000, 0)), http.StatusForbidden},
		// An earlier job x (its workspace deleted and created again
		// since): signed for another job than this x.
		{"an earlier x's signature", signedAt(x.CreatedOn.Add(-time.Hour), "default", "x", "user_logs/std_log.txt", soon), http.StatusForbidden},
		// Signed with the server's own key: a job that does not exist is
		// the signature's refusal, never a file outside.
		{"a job name leaving the workspace", signed("default", "../../etc", "user_logs/std_log.txt", soon), http.StatusForbidden},
		{"a job name leaving the logs", signed("default", "../etc", "user_logs/std_log.txt", soon), http.StatusForbidden},
		// The server cleans the path into another job's, which the
		// signature does not match.
		{"a file name leaving the job", signed("default", "x", "../../etc/1/rank-0.log", soon), http.StatusForbidden},
		{"a rank written with a leading zero", signed("default", "x", "user_logs/std_log_process_00.txt", soon), http.StatusNotFound},
		{"a negative rank", signed("default", "x", "user_logs/std_log_process_-1.txt", soon), http.StatusNotFound},
		{"a rank the job does not have", signed("default", "x", "user_logs/std_log_process_7.txt", soon), http.StatusNotFound},
	} {
		r := send(t, e, "", "GET", c.path, "", nil)
		if r.status != c.status || strings.Contains(string(r.body), sentinel) || strings.Contains(string(r.body), "log of x") {
			t.Errorf("%s (%s): %s, want %d", c.what, c.path, r, c.status)
		}
	}
	// Odd names under the run's path, with a bearer: nothing outside.
	for _, p := range []string{"/runs/..%2F..%2Fetc/details", "/runs/..%2Fetc/logs/user_logs/std_log.txt", "/runs/x/logs/..%2F..%2Fetc%2F1%2Frank-0.log", "/runs/%2E%2E/details"} {
		r := send(t, e, e.admin, "GET", historyWS+p, "", nil)
		if r.status < 400 || strings.Contains(string(r.body), sentinel) {
			t.Errorf("GET %s: %s", p, r)
		}
	}
	if r := send(t, e, carl, "POST", historyWS+"/rundata", `{"runId":`, nil); r.status != http.StatusBadRequest {
		t.Errorf("a broken run data request: %s, want 400", r)
	}
}

// TestRunHistoryTakesTheARMCredential: azure-ai-ml calls run history
// with the token it calls Resource Manager with (audience
// management.azure.com); run history takes it as the ARM routes do, for
// the roles its principal holds, while Shoal's own routes keep refusing
// it.
func TestRunHistoryTakesTheARMCredential(t *testing.T) {
	e := newTestEnv(t)
	runJob(t, e, "x")
	_, created := do(t, e.ts, e.admin, "POST", "/api/v1/serviceprincipals", `{"name":"nb"}`, nil)
	status, body := postToken(t, e, "/any-tenant/oauth2/v2.0/token", grant(created["client_id"].(string), created["client_secret"].(string), "https://management.azure.com/.default"))
	if status != http.StatusOK {
		t.Fatalf("ARM token: %d %v", status, body)
	}
	arm := body["access_token"].(string)
	if r := send(t, e, arm, "GET", historyWS+"/runs/x/details", "", nil); r.status != http.StatusForbidden {
		t.Errorf("details without a role: %s, want 403", r)
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/roleassignments", `{"principal":"sp:nb","role":"Reader"}`, http.StatusCreated)
	if d := getDetails(t, e, arm, "x"); d.RunID != "x" {
		t.Errorf("details with the ARM token: %+v", d)
	}
	if r := send(t, e, arm, "GET", "/api/v1/workspaces/default/jobs/x", "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("the ARM token on Shoal's own job route: %s, want 401", r)
	}
}

// TestRunHistoryAfterARetry: a job's first attempt fails and the job
// runs again (retries: 1): the details name the second attempt's log
// (what `shoal job logs` shows now) and say, among the warnings, that
// the first attempt ended Failed.
func TestRunHistoryAfterARetry(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	retries := 1
	_, cred := joinNode(t, e) // j-gpu takes the node
	if _, err := e.svc.CancelJob(ctx, "default", "j-gpu"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.SubmitJob(ctx, "default", &job.JobSpec{Name: "x", Command: "echo hi", Compute: "gpu", Retries: &retries}); err != nil {
		t.Fatal(err)
	}
	start := func() string {
		t.Helper()
		for range 5 {
			ctrl := control.New(e.svc, 1)
			if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
			ctrl.Wait()
			var resp node.AgentSyncResponse
			json.Unmarshal(mustSend(t, e, cred, "POST", "/agent/v1/sync", `{}`, http.StatusOK).body, &resp)
			for _, task := range resp.Start {
				if task.JobName == "x" {
					return task.AttemptID
				}
			}
		}
		t.Fatal("x never started")
		return ""
	}
	first := start()
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+first+"/ranks/0/logs?offset=0", "first attempt\n", http.StatusNoContent)
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+first+"/ranks/0/status", `{"state":"Failed","exit_code":1}`, http.StatusOK)
	second := start()
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+second+"/ranks/0/logs?offset=0", "second attempt\n", http.StatusNoContent)
	d := getDetails(t, e, e.admin, "x")
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0].Message, "attempt 1 ended Failed") || d.Error != nil {
		t.Errorf("details after a retry: %+v", d)
	}
	native := mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/x/logs", "", http.StatusOK).body
	if got := mustSend(t, e, "", "GET", logPath(t, d.LogFiles["user_logs/std_log.txt"]), "", http.StatusOK).body; string(got) != "second attempt\n" || string(got) != string(native) {
		t.Errorf("the log URL reads %q, shoal job logs %q", got, native)
	}
}

// TestRunHistoryChildren: a pipeline's steps' jobs are its run's
// children (jobs.list(parent_job_name=...)), each with the pipeline as
// its parent and root; a step's job reads as a run (jobs.get of a child);
// the pipeline's one log is its timeline, under Azure's name.
func TestRunHistoryChildren(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	maxN := 1
	if _, _, err := e.svc.CreateOrApplyCompute(ctx, "default", &compute.ComputeSpec{Name: "cpu", Size: "Standard_DS3_v2", MaxInstances: &maxN}, ""); err != nil {
		t.Fatal(err)
	}
	mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/jobs",
		`{"name":"pipe","type":"pipeline","jobs":{"prep":{"type":"command","command":"echo a","compute":"cpu"},"train":{"type":"command","command":"echo b","compute":"cpu"}}}`, http.StatusCreated)
	d := getDetails(t, e, e.admin, "pipe")
	timeline, ok := d.LogFiles["logs/azureml/executionlogs.txt"]
	if len(d.LogFiles) != 1 || !ok || d.Target != "" {
		t.Fatalf("a pipeline's own details: %+v", d)
	}
	if got := mustSend(t, e, "", "GET", logPath(t, timeline), "", http.StatusOK).body; len(got) != 0 {
		t.Errorf("the timeline of a pipeline with no step submitted: %q", got)
	}
	ctrl := control.New(e.svc, 1)
	if err := ctrl.RunOnce(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	ctrl.Wait()
	var children struct {
		Value []struct {
			RunID       string `json:"runId"`
			ParentRunID string `json:"parentRunId"`
			RootRunID   string `json:"rootRunId"`
			Target      string `json:"target"`
		} `json:"value"`
	}
	json.Unmarshal(mustSend(t, e, e.admin, "GET", historyWS+"/runs/pipe/children", "", http.StatusOK).body, &children)
	if len(children.Value) != 2 {
		t.Fatalf("children of a two-step pipeline: %+v", children.Value)
	}
	for i, step := range []string{"prep", "train"} {
		c := children.Value[i]
		if c.RunID != job.PipelineChildName("pipe", step) || c.ParentRunID != "pipe" || c.RootRunID != "pipe" || c.Target != "cpu" {
			t.Errorf("child %d: %+v", i, c)
		}
	}
	// The pipeline's log is its timeline; it has no rank's log.
	got := string(mustSend(t, e, "", "GET", logPath(t, timeline), "", http.StatusOK).body)
	if lines := strings.Split(strings.TrimSpace(got), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[0], " step prep: job pipe-prep submitted") || !strings.HasSuffix(lines[1], " step train: job pipe-train submitted") {
		t.Errorf("the pipeline's timeline: %q", got)
	}
	if r := send(t, e, e.admin, "GET", historyWS+"/runs/pipe/logs/user_logs/std_log.txt", "", nil); r.status != http.StatusNotFound {
		t.Errorf("a rank's log of a pipeline: %s, want 404", r)
	}
	var run struct {
		RunID        string `json:"runId"`
		ParentRunID  string `json:"parentRunId"`
		ExperimentID string `json:"experimentId"`
	}
	json.Unmarshal(mustSend(t, e, e.admin, "GET", historyWS+"/runs/"+job.PipelineChildName("pipe", "prep"), "", http.StatusOK).body, &run)
	prep, err := e.svc.FindJob(ctx, "default", "pipe-prep")
	if err != nil || prep.ExperimentName == "" {
		t.Fatalf("pipe-prep: %+v %v", prep, err)
	}
	if run.RunID != "pipe-prep" || run.ParentRunID != "pipe" || run.ExperimentID != prep.ExperimentName {
		t.Errorf("a step's run: %+v", run)
	}
}
