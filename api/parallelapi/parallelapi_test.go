package parallelapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api/parallelapi"
	"github.com/shoal-ml/shoal/domain/job"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/service/parallel"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// The ledger's routes over HTTP, on a real store: only the attempt's own
// token opens its ledger; JSON is decoded strictly; a plan, a lease, a
// report and the rows go through.
func TestRoutes(t *testing.T) {
	st, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	files, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	key, _ := sealing.New(bytes.Repeat([]byte{3}, sealing.KeySize))
	err = st.Update(t.Context(), func(tx store.Tx) error {
		for _, name := range []string{"a", "b"} {
			j := &job.Job{Workspace: "ws", JobSpec: job.JobSpec{Name: name, Command: "x", Compute: "cpu", Parallel: &job.ParallelSpec{}},
				Status: job.JobRunning, CreatedOn: tx.Now(), CurrentAttemptID: "att-" + name, AttemptCount: 1, Version: 1}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			if err := tx.InsertAttempt(&job.Attempt{ID: "att-" + name, Workspace: "ws", JobName: name, Number: 1, Status: job.AttemptRunning,
				CreatedOn: tx.Now(), Ranks: []*job.RankStatus{{Rank: 0, NodeID: "n", Status: job.AttemptRunning}}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	api := parallelapi.New(parallel.New(parallel.Config{Store: st, Files: files, Key: key}), nil, nil)
	mux := http.NewServeMux()
	for _, r := range api.Routes() {
		mux.Handle(r.Pattern, r.Handler)
	}
	call := func(method, attempt, path, token, body string) (int, string) {
		req := httptest.NewRequestWithContext(t.Context(), method, pproto.PathPrefix+attempt+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	tokA, tokB := parallel.Token(key, "att-a"), parallel.Token(key, "att-b")
	plan := `{"rank":0,"kind":"files","items":2,"mini_batches":2,"fingerprint":"f"}`
	for name, tc := range map[string]struct{ attempt, token string }{
		"no token":              {"att-a", ""},
		"another job's token":   {"att-a", tokB},
		"a token of no attempt": {"att-c", parallel.Token(key, "att-c")},
	} {
		if code, body := call("POST", tc.attempt, pproto.PathPlan, tc.token, plan); code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s, want 401", name, code, body)
		}
	}
	if code, body := call("POST", "att-a", pproto.PathPlan, tokA, `{"rank":0,"kind":"files","sneaky":1}`); code != http.StatusBadRequest || !strings.Contains(body, "sneaky") {
		t.Errorf("unknown key: %d %s", code, body)
	}
	if code, body := call("POST", "att-a", pproto.PathPlan, tokA, plan); code != http.StatusOK || !strings.Contains(body, `"mini_batches":2`) {
		t.Fatalf("plan: %d %s", code, body)
	}
	code, body := call("POST", "att-a", pproto.PathLease, tokA, `{"rank":0,"max":5}`)
	var lr pproto.LeaseResponse
	if code != http.StatusOK || json.Unmarshal([]byte(body), &lr) != nil || len(lr.Leases) != 2 {
		t.Fatalf("lease: %d %s", code, body)
	}
	for _, l := range lr.Leases {
		req, _ := json.Marshal(pproto.CompleteRequest{Index: l.Index, Try: l.Try, Outcome: pproto.OutcomeDone, Items: 1, Rows: []string{"row " + string(rune('0'+l.Index))}})
		if code, body := call("POST", "att-a", pproto.PathComplete, tokA, string(req)); code != http.StatusOK || !strings.Contains(body, `"done"`) {
			t.Fatalf("complete: %d %s", code, body)
		}
	}
	if code, body := call("GET", "att-a", pproto.PathRows, tokA, ""); code != http.StatusOK || body != "row 0\nrow 1\n" {
		t.Errorf("rows: %d %q", code, body)
	}
	if code, body := call("GET", "att-b", pproto.PathRows, tokA, ""); code != http.StatusUnauthorized {
		t.Errorf("rows of another job with this token: %d %q", code, body)
	}
	if code, body := call("GET", "att-a", pproto.PathProgress, tokA, ""); code != http.StatusOK || !strings.Contains(body, `"done":2`) {
		t.Errorf("progress: %d %s", code, body)
	}
	if code, body := call("POST", "att-a", pproto.PathFiles, tokA, "x"); code != http.StatusBadRequest || !strings.Contains(body, pproto.RankHeader) {
		t.Errorf("files without a rank: %d %s", code, body)
	}
}
