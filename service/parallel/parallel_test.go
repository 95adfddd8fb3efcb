package parallel_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/service/parallel"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/storetest"
)

// ledger is a Service over a real SQLite store and file store, with one
// parallel job whose current attempt is "att-1".
type ledger struct {
	t     *testing.T
	svc   *parallel.Service
	st    store.Store
	clock *storetest.Clock
	key   *sealing.Key
	c     *parallel.Caller
	// path and files are the store's database and file store, which a
	// restart opens again.
	path  string
	files *filestore.Store
}

func newLedger(t *testing.T, spec job.ParallelSpec) *ledger {
	t.Helper()
	clock := storetest.NewClock(storetest.Start)
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := sqlite.Open(t.Context(), sqlite.Config{Path: path, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	files, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	key, err := sealing.New(bytes.Repeat([]byte{7}, sealing.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	l := &ledger{t: t, st: st, clock: clock, key: key, path: path, files: files,
		svc: parallel.New(parallel.Config{Store: st, Files: files, Key: key, LeaseGrace: 10 * time.Second})}
	l.addAttempt("att-1", 1, spec)
	l.c = l.auth("att-1")
	return l
}

// addAttempt makes attempt id (number n) the job's current one.
func (l *ledger) addAttempt(id string, n int, spec job.ParallelSpec) {
	l.t.Helper()
	err := l.st.Update(l.t.Context(), func(tx store.Tx) error {
		j, err := tx.GetJob("ws", "pj")
		if core.ErrorCode(err) == core.ENOTFOUND {
			j = &job.Job{Workspace: "ws", JobSpec: job.JobSpec{Name: "pj", Command: job.ParallelCommand(""), Compute: "cpu",
				Parallel: &spec, Outputs: map[string]*job.JobOutput{"score": {Type: "uri_folder"}}},
				Status: job.JobRunning, CreatedOn: tx.Now(), Version: 1}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if j.CurrentAttemptID != "" {
			old, err := tx.GetAttempt(j.CurrentAttemptID)
			if err != nil {
				return err
			}
			old.Status = job.AttemptLost
			if err := tx.UpdateAttempt(old); err != nil {
				return err
			}
		}
		j.CurrentAttemptID, j.AttemptCount = id, n
		if err := tx.UpdateJob(j); err != nil {
			return err
		}
		return tx.InsertAttempt(&job.Attempt{ID: id, Workspace: "ws", JobName: "pj", Number: n, Status: job.AttemptRunning, CreatedOn: tx.Now(),
			Ranks: ranks(4)})
	})
	if err != nil {
		l.t.Fatal(err)
	}
}

// restart closes the store and opens it again under a new Service, as a
// server restart (or another replica) does.
func (l *ledger) restart() {
	l.t.Helper()
	if err := l.st.Close(); err != nil {
		l.t.Fatal(err)
	}
	st, err := sqlite.Open(l.t.Context(), sqlite.Config{Path: l.path, Clock: l.clock})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { st.Close() })
	l.st = st
	l.svc = parallel.New(parallel.Config{Store: st, Files: l.files, Key: l.key})
	l.c = l.auth(l.c.AttemptID)
}

// ranks are n running ranks, on nodes n0, n1...
func ranks(n int) []*job.RankStatus {
	var out []*job.RankStatus
	for i := range n {
		out = append(out, &job.RankStatus{Rank: i, NodeID: "n" + strconv.Itoa(i), Status: job.AttemptRunning})
	}
	return out
}

func (l *ledger) auth(attemptID string) *parallel.Caller {
	l.t.Helper()
	c, err := l.svc.Authenticate(l.t.Context(), attemptID, parallel.Token(l.key, attemptID))
	if err != nil {
		l.t.Fatalf("Authenticate %s: %v", attemptID, err)
	}
	return c
}

func (l *ledger) plan(n int) {
	l.t.Helper()
	desc := make([]string, n)
	for i := range desc {
		desc[i] = "f" + string(rune('a'+i%26)) + ".txt (1)"
	}
	if _, err := l.svc.Plan(l.t.Context(), l.c, pproto.PlanRequest{Kind: pproto.KindFiles, Items: n, MiniBatches: n, Fingerprint: "f0", Describe: desc}); err != nil {
		l.t.Fatalf("Plan: %v", err)
	}
}

func (l *ledger) lease(c *parallel.Caller, rank, n int) *pproto.LeaseResponse {
	l.t.Helper()
	r, err := l.svc.Lease(l.t.Context(), c, pproto.LeaseRequest{Rank: rank, Max: n})
	if err != nil {
		l.t.Fatalf("Lease: %v", err)
	}
	return r
}

func (l *ledger) complete(c *parallel.Caller, req pproto.CompleteRequest) *pproto.CompleteResponse {
	l.t.Helper()
	r, err := l.svc.Complete(l.t.Context(), c, req)
	if err != nil {
		l.t.Fatalf("Complete: %v", err)
	}
	return r
}

func (l *ledger) progress() *job.ParallelProgress {
	l.t.Helper()
	p, err := l.svc.Progress(l.t.Context(), "ws", "pj")
	if err != nil {
		l.t.Fatal(err)
	}
	return p
}

func indexes(r *pproto.LeaseResponse) []int {
	out := []int{}
	for _, x := range r.Leases {
		out = append(out, x.Index)
	}
	return out
}

func eq[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
}

func done(index, try, rank int, rows ...string) pproto.CompleteRequest {
	return pproto.CompleteRequest{Rank: rank, Index: index, Try: try, Outcome: pproto.OutcomeDone, Items: len(rows), Rows: rows}
}

// A job's mini-batches are leased lowest first, each once, then done;
// rows come back in mini-batch order whatever order they finished in, a
// report of a try given away is stale, and progress counts it all.
func TestLeaseCompleteRows(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{InputData: "${{inputs.data}}"})
	l.plan(5)
	eq(t, "rank 0's leases", indexes(l.lease(l.c, 0, 2)), []int{0, 1})
	eq(t, "rank 1's leases", indexes(l.lease(l.c, 1, 2)), []int{2, 3})
	if r := l.complete(l.c, done(2, 1, 1, "c")); r.State != pproto.CompletedDone {
		t.Fatalf("complete 2: %+v", r)
	}
	if r := l.complete(l.c, done(2, 1, 1, "c again")); r.State != pproto.CompletedStale {
		t.Errorf("a second report of a done try: %+v, want stale", r)
	}
	if r := l.complete(l.c, done(0, 1, 1, "wrong rank")); r.State != pproto.CompletedStale {
		t.Errorf("a report from a rank that does not hold the lease: %+v, want stale", r)
	}
	l.complete(l.c, done(0, 1, 0, "a"))
	l.clock.Advance(time.Minute)
	l.complete(l.c, done(1, 1, 0, "b"))
	l.complete(l.c, done(3, 1, 1, "d1", "d2"))
	p := l.progress()
	if p.MiniBatches != 5 || p.Done != 4 || p.Left != 1 || p.InFlight != 0 || p.Failed != 0 {
		t.Errorf("progress: %+v", p)
	}
	if p.PerMinute != 4 || p.ETA != storetest.Start.Add(time.Minute+15*time.Second).UTC().Truncate(time.Second).Format(time.RFC3339) {
		t.Errorf("rate %v, ETA %s: want 4 per minute over the minute since the plan, ETA 15 s on", p.PerMinute, p.ETA)
	}
	eq(t, "last lease", indexes(l.lease(l.c, 0, 4)), []int{4})
	if r := l.lease(l.c, 1, 1); r.State != pproto.StateWait || r.WaitSeconds <= 0 {
		t.Errorf("lease while 4 is in flight: %+v, want wait", r)
	}
	l.complete(l.c, done(4, 1, 0, "e"))
	if r := l.lease(l.c, 1, 1); r.State != pproto.StateDone {
		t.Errorf("lease when all is done: %+v", r)
	}
	var rows bytes.Buffer
	if err := l.svc.WriteRows(t.Context(), l.c, &rows); err != nil {
		t.Fatal(err)
	}
	if rows.String() != "a\nb\nc\nd1\nd2\ne\n" {
		t.Errorf("rows: %q", rows.String())
	}
}

// A failed try goes back to pending until max_retries is spent, then the
// mini-batch fails with its items; errors.txt lists them.
func TestRetryThenFail(t *testing.T) {
	one := 1
	l := newLedger(t, job.ParallelSpec{Retry: &job.ParallelRetry{MaxRetries: &one}})
	l.plan(2)
	eq(t, "leases", indexes(l.lease(l.c, 0, 1)), []int{0})
	fail := pproto.CompleteRequest{Rank: 0, Index: 0, Try: 1, Outcome: pproto.OutcomeFailed, Items: 2, Error: "Traceback\nValueError: bad",
		FailedItems: []pproto.FailedItem{{Item: "/in/a.txt", Error: "ValueError: bad"}, {Item: "/in/b.txt", Error: "ValueError:\tbad"}}}
	if r := l.complete(l.c, fail); r.State != pproto.CompletedRetry {
		t.Fatalf("first failure: %+v, want retry", r)
	}
	r := l.lease(l.c, 1, 1)
	if len(r.Leases) != 1 || r.Leases[0] != (pproto.Lease{Index: 0, Try: 2}) {
		t.Fatalf("the failed mini-batch is given again first: %+v", r)
	}
	fail.Try, fail.Rank = 2, 1
	if r := l.complete(l.c, fail); r.State != pproto.CompletedFailed || r.Abort != "" {
		t.Fatalf("last try: %+v, want failed, no abort (thresholds -1)", r)
	}
	p := l.progress()
	if p.Failed != 1 || p.Retried != 1 || p.FailedItems != 2 || p.Left != 1 {
		t.Errorf("progress: %+v", p)
	}
	var errs bytes.Buffer
	if err := l.svc.WriteErrors(t.Context(), l.c, &errs); err != nil {
		t.Fatal(err)
	}
	if errs.String() != "0\t/in/a.txt\tValueError: bad\n0\t/in/b.txt\tValueError: bad\n" {
		t.Errorf("errors: %q", errs.String())
	}
}

// Past error_threshold the ledger aborts, naming the failed items; every
// rank's next lease says abort.
func TestErrorThresholdAborts(t *testing.T) {
	zero, one := 0, 1
	l := newLedger(t, job.ParallelSpec{ErrorThreshold: &one, Retry: &job.ParallelRetry{MaxRetries: &zero}})
	l.plan(3)
	l.lease(l.c, 0, 3)
	l.complete(l.c, pproto.CompleteRequest{Rank: 0, Index: 0, Try: 1, Outcome: pproto.OutcomeDone, Items: 2, Rows: []string{"x"},
		FailedItems: []pproto.FailedItem{{Item: "a.txt", Error: "no row returned"}}})
	r := l.complete(l.c, pproto.CompleteRequest{Rank: 0, Index: 1, Try: 1, Outcome: pproto.OutcomeFailed, Items: 1, Error: "boom",
		FailedItems: []pproto.FailedItem{{Item: "b.txt", Error: "Traceback...\nRuntimeError: boom"}}})
	if r.State != pproto.CompletedFailed || !strings.Contains(r.Abort, "error_threshold (1)") ||
		!strings.Contains(r.Abort, "a.txt (no row returned)") || !strings.Contains(r.Abort, "b.txt (RuntimeError: boom)") {
		t.Fatalf("complete past the threshold: %+v", r)
	}
	if lr := l.lease(l.c, 1, 1); lr.State != pproto.StateAbort || lr.Message != r.Abort {
		t.Errorf("lease after abort: %+v", lr)
	}
	if p := l.progress(); p.Aborted == "" || p.ETA != "" {
		t.Errorf("progress after abort: %+v", p)
	}
}

// A mini_batch_error_threshold of 0 aborts at the first failed
// mini-batch, a timed-out lease spending its try.
func TestLeaseExpiryAndMiniBatchThreshold(t *testing.T) {
	zero := 0
	l := newLedger(t, job.ParallelSpec{MiniBatchErrorThreshold: &zero, Retry: &job.ParallelRetry{MaxRetries: &zero, Timeout: 20}})
	l.plan(2)
	eq(t, "leases", indexes(l.lease(l.c, 1, 1)), []int{0})
	l.clock.Advance(30 * time.Second) // the timeout and the grace, not past them
	if r := l.lease(l.c, 0, 1); len(r.Leases) != 1 || r.Leases[0].Index != 1 {
		t.Fatalf("lease at the deadline: %+v", r)
	}
	l.clock.Advance(time.Second)
	r := l.lease(l.c, 0, 1)
	if r.State != pproto.StateAbort || !strings.Contains(r.Message, "mini_batch_error_threshold (0)") || !strings.Contains(r.Message, "fa.txt (1) (mini-batch 0: rank 1 held it past") {
		t.Fatalf("lease past the deadlines: %+v", r)
	}
	if c := l.complete(l.c, done(0, 1, 1, "late")); c.State != pproto.CompletedStale {
		t.Errorf("report of an expired lease: %+v", c)
	}
}

// A lost rank's leases come back at once, without spending a try; a new
// attempt takes back the old attempt's leases and skips every finished
// mini-batch; the old attempt's token is refused.
func TestReleaseAndNewAttempt(t *testing.T) {
	zero := 0
	l := newLedger(t, job.ParallelSpec{Retry: &job.ParallelRetry{MaxRetries: &zero}})
	l.plan(6)
	eq(t, "rank 1", indexes(l.lease(l.c, 1, 2)), []int{0, 1})
	eq(t, "rank 0", indexes(l.lease(l.c, 0, 2)), []int{2, 3})
	l.complete(l.c, done(2, 1, 0, "c"))
	if err := l.st.Update(t.Context(), func(tx store.Tx) error { return parallel.ReleaseRank(tx, "ws", "pj", "att-1", 1) }); err != nil {
		t.Fatal(err)
	}
	r := l.lease(l.c, 0, 3)
	if len(r.Leases) != 3 || r.Leases[0] != (pproto.Lease{Index: 0, Try: 2}) || r.Leases[1] != (pproto.Lease{Index: 1, Try: 2}) || r.Leases[2].Index != 4 {
		t.Fatalf("leases after rank 1 was lost: %+v", r)
	}
	if c := l.complete(l.c, done(0, 1, 1, "from the lost rank")); c.State != pproto.CompletedStale {
		t.Errorf("the lost rank's late report: %+v", c)
	}
	if p := l.progress(); p.Retried != 0 || p.Failed != 0 {
		t.Errorf("a release spent a try: %+v", p)
	}
	l.complete(l.c, done(0, 2, 0, "a"))
	// Rank 0 is lost too: the job's next attempt goes on where it stopped.
	l.addAttempt("att-2", 2, job.ParallelSpec{Retry: &job.ParallelRetry{MaxRetries: &zero}})
	if _, err := l.svc.Authenticate(t.Context(), "att-1", parallel.Token(l.key, "att-1")); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("the ended attempt's token: %v, want EUNAUTHORIZED", err)
	}
	c2 := l.auth("att-2")
	if _, err := l.svc.Plan(t.Context(), c2, pproto.PlanRequest{Kind: pproto.KindFiles, Items: 6, MiniBatches: 6, Fingerprint: "f0"}); err != nil {
		t.Fatalf("the same plan again: %v", err)
	}
	eq(t, "the new attempt's leases", indexes(l.lease(c2, 0, 10)), []int{1, 3, 4, 5})
	if c := l.complete(l.c, done(1, 2, 0, "old attempt")); c.State != pproto.CompletedStale {
		t.Errorf("the old attempt's report: %+v", c)
	}
	if p := l.progress(); p.Done != 2 || p.InFlight != 4 || p.Retried != 0 {
		t.Errorf("progress in the new attempt: %+v", p)
	}
}

// Hostile and broken requests: a token of another attempt or key, a
// changed listing, an empty input, too many mini-batches, an index out of
// the plan, an unknown outcome.
func TestRefused(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{})
	other, _ := sealing.New(bytes.Repeat([]byte{8}, sealing.KeySize))
	for name, tok := range map[string]string{
		"another key":     parallel.Token(other, "att-1"),
		"another attempt": parallel.Token(l.key, "att-2"),
		"no prefix":       strings.TrimPrefix(parallel.Token(l.key, "att-1"), "shoalpar_"),
		"empty":           "",
	} {
		if _, err := l.svc.Authenticate(t.Context(), "att-1", tok); core.ErrorCode(err) != core.EUNAUTHORIZED {
			t.Errorf("%s: %v, want EUNAUTHORIZED", name, err)
		}
	}
	if _, err := l.svc.Lease(t.Context(), l.c, pproto.LeaseRequest{Max: 1}); core.ErrorCode(err) != core.ECONFLICT {
		t.Errorf("lease before a plan: %v", err)
	}
	for _, rank := range []int{-1, 4} {
		if _, err := l.svc.Lease(t.Context(), l.c, pproto.LeaseRequest{Rank: rank, Max: 1}); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("lease for rank %d of 4: %v, want EINVALID", rank, err)
		}
	}
	for name, tc := range map[string]struct {
		req   pproto.PlanRequest
		field string
	}{
		"empty":       {pproto.PlanRequest{Kind: pproto.KindFiles, Fingerprint: "0"}, "input_data"},
		"too many":    {pproto.PlanRequest{Kind: pproto.KindFiles, Items: 1_000_000, MiniBatches: job.MaxMiniBatches + 1, Fingerprint: "0"}, "mini_batch_size"},
		"kind":        {pproto.PlanRequest{Kind: "bytes", Items: 1, MiniBatches: 1, Fingerprint: "0"}, "kind"},
		"more than":   {pproto.PlanRequest{Kind: pproto.KindFiles, Items: 1, MiniBatches: 2, Fingerprint: "0"}, "mini_batches"},
		"fingerprint": {pproto.PlanRequest{Kind: pproto.KindFiles, Items: 1, MiniBatches: 1}, "fingerprint"},
		"not hex":     {pproto.PlanRequest{Kind: pproto.KindFiles, Items: 1, MiniBatches: 1, Fingerprint: "'; DROP"}, "fingerprint"},
		"negative":    {pproto.PlanRequest{Kind: pproto.KindFiles, Items: -5, MiniBatches: -1, Fingerprint: "0"}, "items"},
		"describe":    {pproto.PlanRequest{Kind: pproto.KindFiles, Items: 1, MiniBatches: 1, Fingerprint: "0", Describe: []string{"a", "b"}}, "describe"},
		"rank":        {pproto.PlanRequest{Rank: 9, Kind: pproto.KindFiles, Items: 1, MiniBatches: 1, Fingerprint: "0"}, "rank"},
	} {
		_, err := l.svc.Plan(t.Context(), l.c, tc.req)
		if e, ok := err.(*core.Error); !ok || e.Code != core.EINVALID || e.Field != tc.field {
			t.Errorf("plan %s: %v, want EINVALID on %s", name, err, tc.field)
		}
	}
	l.plan(3)
	_, err := l.svc.Plan(t.Context(), l.c, pproto.PlanRequest{Kind: pproto.KindFiles, Items: 3, MiniBatches: 3, Fingerprint: "c0ffee"})
	if core.ErrorCode(err) != core.ECONFLICT || !strings.Contains(err.Error(), "input changed") {
		t.Errorf("a changed listing: %v", err)
	}
	l.lease(l.c, 0, 1)
	for name, req := range map[string]pproto.CompleteRequest{
		"index":   {Index: 3, Try: 1, Outcome: pproto.OutcomeDone},
		"neg":     {Index: -1, Try: 1, Outcome: pproto.OutcomeDone},
		"outcome": {Index: 0, Try: 1, Outcome: "maybe"},
	} {
		if _, err := l.svc.Complete(t.Context(), l.c, req); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("complete %s: %v, want EINVALID", name, err)
		}
	}
}

func tarOf(t *testing.T, files map[string]string, typ byte) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: typ}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	return &b
}

// Posted files merge, the newest post of a path winning; a tar with a
// path outside the job's outputs, a link or "..", is refused whole.
func TestFiles(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{})
	l.plan(1)
	ctx := t.Context()
	if err := l.svc.PostFiles(ctx, l.c, 1, tarOf(t, map[string]string{"score/a.txt": "old"}, tar.TypeReg)); err != nil {
		t.Fatal(err)
	}
	if err := l.svc.PostFiles(ctx, l.c, 0, tarOf(t, map[string]string{"score/a.txt": "new", "score/sub/b.txt": "b"}, tar.TypeReg)); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]*bytes.Buffer{
		"other output": tarOf(t, map[string]string{"logs/x": "x"}, tar.TypeReg),
		"dotdot":       tarOf(t, map[string]string{"score/../../etc/passwd": "x"}, tar.TypeReg),
		"absolute":     tarOf(t, map[string]string{"/score/x": "x"}, tar.TypeReg),
		"symlink":      tarOf(t, map[string]string{"score/link": ""}, tar.TypeSymlink),
		"not a tar":    bytes.NewBufferString(strings.Repeat("garbage!", 200)),
	} {
		if err := l.svc.PostFiles(ctx, l.c, 0, bad); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("post %s: %v, want EINVALID", name, err)
		}
	}
	var out bytes.Buffer
	if err := l.svc.WriteFiles(ctx, l.c, &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		var b bytes.Buffer
		b.ReadFrom(tr)
		got[h.Name] = b.String()
	}
	if len(got) != 2 || got["score/a.txt"] != "new" || got["score/sub/b.txt"] != "b" {
		t.Errorf("merged files: %v", got)
	}
}

// The ledger is the store's: after a restart the finished mini-batches
// stay finished and the leases stand; a lease request is bounded.
func TestRestartKeepsTheLedger(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{})
	l.plan(300)
	if r := l.lease(l.c, 0, 0); len(r.Leases) != 1 {
		t.Fatalf("max 0 leases one: %+v", r)
	}
	l.complete(l.c, done(0, 1, 0, "a"))
	if r := l.lease(l.c, 1, 100000); len(r.Leases) != 256 || r.Leases[0].Index != 1 {
		t.Fatalf("a huge max: %d leases from %+v", len(r.Leases), r.Leases[:1])
	}
	l.restart()
	if p := l.progress(); p.Done != 1 || p.InFlight != 256 || p.Left != 299 {
		t.Fatalf("progress after a restart: %+v", p)
	}
	eq(t, "leases after a restart", indexes(l.lease(l.c, 0, 3)), []int{257, 258, 259})
	if r := l.complete(l.c, done(1, 1, 1, "b")); r.State != pproto.CompletedDone {
		t.Errorf("a report across the restart: %+v", r)
	}
}

// A report's texts are kept whole-character and without NUL bytes (which
// PostgreSQL's text refuses), however long or strange.
func TestHostileTexts(t *testing.T) {
	zero := 0
	l := newLedger(t, job.ParallelSpec{Retry: &job.ParallelRetry{MaxRetries: &zero}})
	l.plan(1)
	l.lease(l.c, 0, 1)
	long := strings.Repeat("é", 10000) // 2 bytes each: a byte cut would split one
	r := l.complete(l.c, pproto.CompleteRequest{Index: 0, Try: 1, Outcome: pproto.OutcomeFailed, Items: 1, Error: "a\x00b" + long,
		FailedItems: []pproto.FailedItem{{Item: "x\x00y\tz\nw", Error: long}}})
	if r.State != pproto.CompletedFailed {
		t.Fatalf("complete: %+v", r)
	}
	var errs bytes.Buffer
	if err := l.svc.WriteErrors(t.Context(), l.c, &errs); err != nil {
		t.Fatal(err)
	}
	line := errs.String()
	if strings.Contains(line, "\x00") || !utf8.ValidString(line) || strings.Count(line, "\n") != 1 || strings.Count(line, "\t") != 2 ||
		!strings.HasPrefix(line, "0\txy z w\t") || len(line) > 9000 {
		t.Errorf("errors line (%d bytes): %q…", len(line), line[:min(len(line), 40)])
	}
}

// A post past the size bound is refused with the artifact store's words,
// and nothing of it is kept.
func TestFilesTooLarge(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{})
	l.svc = parallel.New(parallel.Config{Store: l.st, Files: l.files, Key: l.key, MaxFilesBytes: 4096})
	l.plan(1)
	err := l.svc.PostFiles(t.Context(), l.c, 0, tarOf(t, map[string]string{"score/big.bin": strings.Repeat("x", 64<<10)}, tar.TypeReg))
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "larger than 4096 bytes") {
		t.Fatalf("a post past the bound: %v", err)
	}
	l.noFilesKept()
}

// Ranks leasing and reporting at once never get the same mini-batch
// twice: every one is done once and its row is kept once.
func TestConcurrentRanks(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{})
	const n = 60
	l.plan(n)
	errs := make(chan error, 4)
	for rank := range 4 {
		go func() {
			for {
				r, err := l.svc.Lease(t.Context(), l.c, pproto.LeaseRequest{Rank: rank, Max: 2})
				if err != nil {
					errs <- err
					return
				}
				switch r.State {
				case pproto.StateDone:
					errs <- nil
					return
				case pproto.StateWait:
					continue // the others hold the rest: ask again
				}
				for _, le := range r.Leases {
					c, err := l.svc.Complete(t.Context(), l.c, done(le.Index, le.Try, rank, strconv.Itoa(le.Index)))
					if err == nil && c.State != pproto.CompletedDone {
						err = fmt.Errorf("mini-batch %d: %s", le.Index, c.State)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var rows bytes.Buffer
	if err := l.svc.WriteRows(t.Context(), l.c, &rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(rows.String()), "\n")
	if len(lines) != n {
		t.Fatalf("%d rows, want %d", len(lines), n)
	}
	for i, l := range lines {
		if l != strconv.Itoa(i) {
			t.Fatalf("row %d is %q", i, l)
		}
	}
	if p := l.progress(); p.Done != n || p.Left != 0 || p.Retried != 0 {
		t.Errorf("progress: %+v", p)
	}
}

// Attack: a rank posts a small gzip'd tar that unpacks to far more than
// the server will read (a "zip bomb": zeros compress a thousandfold), or
// an entry whose name is 200 kB long. Both are refused whole, naming
// the body, and nothing of them is kept.
func TestFilesBombRefused(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{})
	l.svc = parallel.New(parallel.Config{Store: l.st, Files: l.files, Key: l.key, MaxFilesBytes: 1 << 20, MaxUnpackedBytes: 4 << 20})
	l.plan(1)
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	tw := tar.NewWriter(zw)
	for i := range 3 {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("score/zeros%d.bin", i), Mode: 0o644, Size: 2 << 20, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(make([]byte, 2<<20)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	if bomb.Len() > 1<<20 {
		t.Fatalf("the bomb is %d bytes, not under the post bound", bomb.Len())
	}
	err := l.svc.PostFiles(t.Context(), l.c, 0, &bomb)
	if e, ok := err.(*core.Error); !ok || e.Code != core.EINVALID || e.Field != "body" || !strings.Contains(e.Message, "unpack to more than") {
		t.Errorf("a post unpacking to 6 MiB past a 4 MiB bound: %v, want EINVALID on body", err)
	}
	long := "score/" + strings.Repeat("d/", 100_000) + "x"
	if err := l.svc.PostFiles(t.Context(), l.c, 0, tarOf(t, map[string]string{long: "x"}, tar.TypeReg)); core.ErrorCode(err) != core.EINVALID {
		t.Errorf("an entry named by 200 kB: %v, want EINVALID", err)
	}
	l.noFilesKept()
}

// noFilesKept fails the test when the ledger holds any posted file.
func (l *ledger) noFilesKept() {
	l.t.Helper()
	var out bytes.Buffer
	if err := l.svc.WriteFiles(l.t.Context(), l.c, &out); err != nil {
		l.t.Fatal(err)
	}
	if h, err := tar.NewReader(&out).Next(); err == nil {
		l.t.Errorf("a refused post was kept: %.40s", h.Name)
	}
}

// Attack: a plan's description of a mini-batch 100 kB long with NUL
// bytes is kept cut to 200 bytes without them, and so is the errors
// line it becomes when the mini-batch fails naming no item.
func TestHostileDescribe(t *testing.T) {
	zero := 0
	l := newLedger(t, job.ParallelSpec{Retry: &job.ParallelRetry{MaxRetries: &zero}})
	desc := "\x00" + strings.Repeat("ü", 50_000)
	if _, err := l.svc.Plan(t.Context(), l.c, pproto.PlanRequest{Kind: pproto.KindFiles, Items: 1, MiniBatches: 1, Fingerprint: "f0", Describe: []string{desc}}); err != nil {
		t.Fatal(err)
	}
	l.lease(l.c, 0, 1)
	l.complete(l.c, pproto.CompleteRequest{Index: 0, Try: 1, Outcome: pproto.OutcomeFailed, Items: 1, Error: "boom"})
	var errs bytes.Buffer
	if err := l.svc.WriteErrors(t.Context(), l.c, &errs); err != nil {
		t.Fatal(err)
	}
	line := errs.String()
	if strings.Contains(line, "\x00") || !utf8.ValidString(line) || len(line) > 300 || !strings.HasPrefix(line, "0\tüü") {
		t.Errorf("errors line (%d bytes): %q…", len(line), line[:min(len(line), 40)])
	}
}

// Attack: a post of more entries than a post may hold (empty folders
// escape the size bounds, and the ledger merges every name of a job's
// posts in memory) is refused whole.
func TestFilesTooManyEntries(t *testing.T) {
	l := newLedger(t, job.ParallelSpec{})
	l.svc = parallel.New(parallel.Config{Store: l.st, Files: l.files, Key: l.key, MaxFilesEntries: 10})
	l.plan(1)
	dirs := map[string]string{}
	for i := range 11 {
		dirs[fmt.Sprintf("score/d%d/", i)] = ""
	}
	err := l.svc.PostFiles(t.Context(), l.c, 0, tarOf(t, dirs, tar.TypeDir))
	if e, ok := err.(*core.Error); !ok || e.Code != core.EINVALID || e.Field != "body" || !strings.Contains(e.Message, "more than 10 entries") {
		t.Errorf("a post of 11 entries past 10: %v, want EINVALID on body", err)
	}
	l.noFilesKept()
	delete(dirs, "score/d0/")
	if err := l.svc.PostFiles(t.Context(), l.c, 0, tarOf(t, dirs, tar.TypeDir)); err != nil {
		t.Errorf("a post of 10 entries: %v", err)
	}
}
