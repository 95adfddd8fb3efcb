package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
)

// A final report carries the end of its rank's log (node.RankReport.Log):
// the server says on every sync that it takes one, writes the end at its
// offset before it applies the report, and the job's log reads whole. The
// attacks first: a report naming an attempt the node does not hold writes
// no log anywhere; a negative offset and an end longer than a report may
// carry are refused by their fields, and change nothing.
func TestFinalReportCarriesTheEndOfTheLog(t *testing.T) {
	e := newTestEnv(t)
	reader := addUser(t, e, "rita", identity.RoleReader)
	_, cred, attempt := runningJobToken(t, e)
	var sync node.AgentSyncResponse
	if err := json.Unmarshal(mustSend(t, e, cred, "POST", "/agent/v1/sync", `{}`, http.StatusOK).body, &sync); err != nil || !sync.ReportsTakeLog {
		t.Fatalf("sync answer %+v (%v): want reports_take_log", sync, err)
	}
	status := "/agent/v1/attempts/" + attempt + "/ranks/0/status"
	mustSend(t, e, cred, "POST", status, `{"state":"Running"}`, http.StatusOK)
	mustSend(t, e, cred, "POST", "/agent/v1/attempts/"+attempt+"/ranks/0/logs?offset=0", "epoch 1\n", http.StatusNoContent)
	logOf := func() string {
		return string(mustSend(t, e, reader, "GET", "/api/v1/workspaces/default/jobs/j-gpu/logs", "", http.StatusOK).body)
	}
	report := func(offset int64, data string) string {
		b, _ := json.Marshal(node.RankReport{State: node.RankCompleted, ExitCode: new(int), Log: &node.RankLogTail{Offset: offset, Data: []byte(data)}})
		return string(b)
	}

	// Another attempt's rank, and one that is nobody's.
	for _, other := range []string{"att-does-not-exist", attempt + "x"} {
		r := send(t, e, cred, "POST", "/agent/v1/attempts/"+other+"/ranks/0/status", report(0, "not mine\n"), nil)
		if r.status < 400 || r.status >= 500 {
			t.Errorf("a report with a log for attempt %s: %s, want refused", other, r)
		}
	}
	for _, c := range []struct{ body, field string }{
		{report(-1, "x"), "log.offset"},
		{report(8, strings.Repeat("x", node.MaxReportLog+1)), "log.data"},
	} {
		r := send(t, e, cred, "POST", status, c.body, nil)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), c.field) {
			t.Errorf("report with a bad %s: %s, want 400 naming it", c.field, r)
		}
	}
	if got := logOf(); got != "epoch 1\n" {
		t.Fatalf("after the refused reports the log reads %q", got)
	}
	if st := mustJob(t, e, reader, "j-gpu"); st != job.JobRunning {
		t.Fatalf("after the refused reports the job is %s", st)
	}

	// The rank's own final report, its log's end riding with it: any
	// bytes, not only UTF-8 (encoding/json sends []byte as base64).
	var resp node.AgentSyncResponse
	if err := json.Unmarshal(mustSend(t, e, cred, "POST", status, report(8, "done\xff\n"), http.StatusOK).body, &resp); err != nil || !resp.ReportsTakeLog {
		t.Errorf("report answer %+v (%v): want reports_take_log", resp, err)
	}
	if got := logOf(); got != "epoch 1\ndone\xff\n" {
		t.Errorf("the log reads %q, want both parts, byte for byte", got)
	}
	if st := mustJob(t, e, reader, "j-gpu"); st != job.JobCompleted {
		t.Errorf("the job is %s, want Completed", st)
	}
	// The same report sent again (its answer lost on the way): refused,
	// the attempt having ended, and its log written at the same offset
	// changes nothing, as a retried upload's chunk does not.
	if r := send(t, e, cred, "POST", status, report(8, "done\xff\n"), nil); r.status < 400 {
		t.Errorf("the final report again: %s, want refused", r)
	}
	if got := logOf(); got != "epoch 1\ndone\xff\n" {
		t.Errorf("after the report sent again the log reads %q", got)
	}
}

// mustJob returns a job's status as token reads it.
func mustJob(t *testing.T, e *testEnv, token, name string) string {
	t.Helper()
	var j struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(mustSend(t, e, token, "GET", "/api/v1/workspaces/default/jobs/"+name, "", http.StatusOK).body, &j); err != nil {
		t.Fatal(err)
	}
	return j.Status
}
