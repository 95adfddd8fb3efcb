package parallel_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	par "github.com/shoal-ml/shoal/domain/parallel"
)

// ledgerDouble speaks domain/parallel's protocol for the driver's tests.
// It is a double: the real ledger is part of the server (service/parallel,
// its store and api routes) and is tested there and end to end with the
// real binary; this one keeps just enough of its rules (first plan wins,
// lowest pending index first, tries fenced, retries, thresholds) to show
// what the driver sends and does with the answers.
type ledgerDouble struct {
	t     *testing.T
	token string
	// Settings, as the server takes them from the job's spec.
	maxRetries, mbThreshold, itemThreshold int

	mu      sync.Mutex
	plan    *par.PlanRequest
	plans   []par.PlanRequest
	state   []string // pending, leased, done, failed
	tries   []int
	rankOf  []int
	rows    [][]string
	errors  []string
	failed  int
	items   int
	aborted string
	files   map[string][]byte
	// log records what came in, in order ("lease 0 max 2", "complete 3
	// done", "files r1 a/b.txt").
	log []string
	// completes are the reports, in order.
	completes []par.CompleteRequest
	// missingFiles lists done reports whose mini-batch's files had not
	// been posted yet (wantFiles says which a mini-batch writes).
	wantFiles    func(index int) []string
	missingFiles []string
}

func newLedger(t *testing.T) (*ledgerDouble, *httptest.Server) {
	l := &ledgerDouble{t: t, token: "shoalpar_1_test", maxRetries: 3, mbThreshold: -1, itemThreshold: -1,
		files: map[string][]byte{}}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return l, srv
}

const ledgerPath = par.PathPrefix + "att1"

func (l *ledgerDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+l.token {
		http.Error(w, `{"message":"bad token"}`, http.StatusUnauthorized)
		return
	}
	route, ok := strings.CutPrefix(r.URL.Path, ledgerPath)
	if !ok {
		http.NotFound(w, r)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch r.Method + " " + route {
	case "POST " + par.PathPlan:
		var req par.PlanRequest
		if !decode(w, r, &req) {
			return
		}
		l.plans = append(l.plans, req)
		if l.plan == nil {
			if req.MiniBatches == 0 {
				http.Error(w, `{"message":"input_data: the input is empty"}`, http.StatusBadRequest)
				return
			}
			l.plan = &req
			l.state = make([]string, req.MiniBatches)
			for i := range l.state {
				l.state[i] = "pending"
			}
			l.tries = make([]int, req.MiniBatches)
			l.rankOf = make([]int, req.MiniBatches)
			l.rows = make([][]string, req.MiniBatches)
		} else if l.plan.Fingerprint != req.Fingerprint {
			http.Error(w, `{"message":"the listing differs from the job's plan"}`, http.StatusConflict)
			return
		}
		reply(w, par.PlanResponse{Kind: l.plan.Kind, Items: l.plan.Items, MiniBatches: l.plan.MiniBatches, Fingerprint: l.plan.Fingerprint})
	case "POST " + par.PathLease:
		var req par.LeaseRequest
		if !decode(w, r, &req) {
			return
		}
		l.log = append(l.log, fmt.Sprintf("lease r%d max %d", req.Rank, req.Max))
		reply(w, l.lease(req))
	case "POST " + par.PathComplete:
		var req par.CompleteRequest
		if !decode(w, r, &req) {
			return
		}
		l.log = append(l.log, fmt.Sprintf("complete %d %s", req.Index, req.Outcome))
		l.completes = append(l.completes, req)
		reply(w, l.complete(req))
	case "POST " + par.PathFiles:
		names, err := untar(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		keys := make([]string, 0, len(names))
		for k, v := range names {
			l.files[k] = v
			keys = append(keys, k)
		}
		sort.Strings(keys)
		l.log = append(l.log, fmt.Sprintf("files r%s %s", r.Header.Get(par.RankHeader), strings.Join(keys, ",")))
		w.WriteHeader(http.StatusNoContent)
	case "GET " + par.PathFiles:
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		keys := make([]string, 0, len(l.files))
		for k := range l.files {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			tw.WriteHeader(&tar.Header{Name: k, Mode: 0o600, Size: int64(len(l.files[k])), Typeflag: tar.TypeReg})
			tw.Write(l.files[k])
		}
		tw.Close()
		w.Write(buf.Bytes())
	case "GET " + par.PathRows:
		for _, rs := range l.rows {
			for _, row := range rs {
				fmt.Fprintln(w, row)
			}
		}
	case "GET " + par.PathErrors:
		for _, e := range l.errors {
			fmt.Fprintln(w, e)
		}
	default:
		http.NotFound(w, r)
	}
}

func (l *ledgerDouble) lease(req par.LeaseRequest) par.LeaseResponse {
	if l.aborted != "" {
		return par.LeaseResponse{State: par.StateAbort, Message: l.aborted}
	}
	if l.plan == nil {
		l.t.Errorf("lease before any plan")
		return par.LeaseResponse{State: par.StateWait, WaitSeconds: 0.01}
	}
	var out []par.Lease
	inFlight := false
	for i, s := range l.state {
		switch {
		case s == "pending" && len(out) < req.Max:
			l.state[i], l.rankOf[i] = "leased", req.Rank
			l.tries[i]++
			out = append(out, par.Lease{Index: i, Try: l.tries[i]})
		case s == "leased":
			inFlight = true
		}
	}
	switch {
	case len(out) > 0:
		return par.LeaseResponse{State: par.StateWork, Leases: out}
	case inFlight:
		return par.LeaseResponse{State: par.StateWait, WaitSeconds: 0.01}
	}
	return par.LeaseResponse{State: par.StateDone}
}

func (l *ledgerDouble) complete(req par.CompleteRequest) par.CompleteResponse {
	i := req.Index
	if l.plan == nil || i < 0 || i >= len(l.state) || l.state[i] != "leased" || l.tries[i] != req.Try {
		return par.CompleteResponse{State: par.CompletedStale}
	}
	if req.Outcome == par.OutcomeDone && l.wantFiles != nil {
		for _, f := range l.wantFiles(i) {
			if _, ok := l.files[f]; !ok {
				l.missingFiles = append(l.missingFiles, f)
			}
		}
	}
	state := par.CompletedDone
	switch req.Outcome {
	case par.OutcomeDone:
		l.state[i], l.rows[i] = "done", req.Rows
	default:
		if l.tries[i] <= l.maxRetries {
			l.state[i] = "pending"
			return par.CompleteResponse{State: par.CompletedRetry}
		}
		l.state[i], state = "failed", par.CompletedFailed
		l.failed++
		if len(req.FailedItems) == 0 {
			l.errors = append(l.errors, fmt.Sprintf("%d\t\t%s", i, oneLine(req.Error)))
		}
	}
	for _, f := range req.FailedItems {
		l.items++
		l.errors = append(l.errors, fmt.Sprintf("%d\t%s\t%s", i, f.Item, oneLine(f.Error)))
	}
	if (l.mbThreshold >= 0 && l.failed > l.mbThreshold) || (l.itemThreshold >= 0 && l.items > l.itemThreshold) {
		l.aborted = fmt.Sprintf("the error threshold was passed: %d mini-batches and %d items failed", l.failed, l.items)
		return par.CompleteResponse{State: state, Abort: l.aborted}
	}
	return par.CompleteResponse{State: state}
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " | ") }

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func untar(body io.Reader) (map[string][]byte, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	var r io.Reader = bytes.NewReader(b)
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		if r, err = gzip.NewReader(r); err != nil {
			return nil, err
		}
	}
	out := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out[h.Name] = data
	}
}

// snapshot reads the double's state under its lock.
func (l *ledgerDouble) snapshot() (log []string, completes []par.CompleteRequest, plans []par.PlanRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...), append([]par.CompleteRequest(nil), l.completes...), append([]par.PlanRequest(nil), l.plans...)
}
