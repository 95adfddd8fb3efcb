// Package paralleltest is a double of a parallel job's ledger for the
// driver's tests and the agent's: it speaks domain/parallel's protocol.
// The real ledger is part of the server (service/parallel, its store and
// api routes) and is tested there and end to end with the real binary;
// this one keeps just enough of its rules (first plan wins, lowest
// pending index first, tries fenced, retries, thresholds) to show what
// the driver sends and does with the answers.
package paralleltest

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

// Ledger is the double: an http.Handler of the ledger's routes under
// PathPrefix + "att1" (Path). Lock Mu to read or set its fields while a
// driver may be talking to it.
type Ledger struct {
	// T reports the double's own surprises.
	T testing.TB
	// Token is the only Bearer token taken.
	Token string
	// MaxRetries, MBThreshold and ItemThreshold are the job's settings
	// (-1: no threshold).
	MaxRetries, MBThreshold, ItemThreshold int

	// Mu guards the rest.
	Mu sync.Mutex
	// Plan is the job's plan once taken; Plans every one proposed.
	Plan  *par.PlanRequest
	Plans []par.PlanRequest
	// State is each mini-batch's: pending, leased, done, failed; Tries
	// its tries so far and RankOf who leased it last.
	State  []string
	Tries  []int
	RankOf []int
	// Rows are each mini-batch's rows; Errors the error lines.
	Rows   [][]string
	Errors []string
	// Failed counts failed mini-batches, Items failed items; Aborted
	// says why the job stopped.
	Failed  int
	Items   int
	Aborted string
	// Files are the posted files, the newest post of a path winning.
	Files map[string][]byte
	// Log records what came in, in order ("lease r0 max 2", "complete 3
	// done", "files r1 a/b.txt").
	Log []string
	// Completes are the reports, in order.
	Completes []par.CompleteRequest
	// MissingFiles lists done reports whose mini-batch's files had not
	// been posted yet (WantFiles says which a mini-batch writes).
	WantFiles    func(index int) []string
	MissingFiles []string
	// Unavailable answers the next so many requests 503, as a server
	// restarting does.
	Unavailable int
}

// Path is the ledger's base path (parallel.PathPrefix + the attempt).
const Path = par.PathPrefix + "att1"

// New is a ledger double served on a private port until the test ends.
func New(t testing.TB) (*Ledger, *httptest.Server) {
	l := &Ledger{T: t, Token: "shoalpar_1_test", MaxRetries: 3, MBThreshold: -1, ItemThreshold: -1,
		Files: map[string][]byte{}}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return l, srv
}

// ServeHTTP answers the ledger's routes.
func (l *Ledger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+l.Token {
		http.Error(w, `{"message":"bad token"}`, http.StatusUnauthorized)
		return
	}
	route, ok := strings.CutPrefix(r.URL.Path, Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if l.Unavailable > 0 {
		l.Unavailable--
		l.Log = append(l.Log, "unavailable")
		http.Error(w, `{"message":"restarting"}`, http.StatusServiceUnavailable)
		return
	}
	switch r.Method + " " + route {
	case "POST " + par.PathPlan:
		var req par.PlanRequest
		if !decode(w, r, &req) {
			return
		}
		l.Plans = append(l.Plans, req)
		if l.Plan == nil {
			if req.MiniBatches == 0 {
				http.Error(w, `{"message":"input_data: the input is empty"}`, http.StatusBadRequest)
				return
			}
			l.Plan = &req
			l.State = make([]string, req.MiniBatches)
			for i := range l.State {
				l.State[i] = "pending"
			}
			l.Tries = make([]int, req.MiniBatches)
			l.RankOf = make([]int, req.MiniBatches)
			l.Rows = make([][]string, req.MiniBatches)
		} else if l.Plan.Fingerprint != req.Fingerprint {
			http.Error(w, `{"message":"the listing differs from the job's plan"}`, http.StatusConflict)
			return
		}
		reply(w, par.PlanResponse{Kind: l.Plan.Kind, Items: l.Plan.Items, MiniBatches: l.Plan.MiniBatches, Fingerprint: l.Plan.Fingerprint})
	case "POST " + par.PathLease:
		var req par.LeaseRequest
		if !decode(w, r, &req) {
			return
		}
		l.Log = append(l.Log, fmt.Sprintf("lease r%d max %d", req.Rank, req.Max))
		reply(w, l.lease(req))
	case "POST " + par.PathComplete:
		var req par.CompleteRequest
		if !decode(w, r, &req) {
			return
		}
		l.Log = append(l.Log, fmt.Sprintf("complete %d %s", req.Index, req.Outcome))
		l.Completes = append(l.Completes, req)
		reply(w, l.complete(req))
	case "POST " + par.PathFiles:
		names, err := untar(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		keys := make([]string, 0, len(names))
		for k, v := range names {
			l.Files[k] = v
			keys = append(keys, k)
		}
		sort.Strings(keys)
		l.Log = append(l.Log, fmt.Sprintf("files r%s %s", r.Header.Get(par.RankHeader), strings.Join(keys, ",")))
		w.WriteHeader(http.StatusNoContent)
	case "GET " + par.PathFiles:
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		keys := make([]string, 0, len(l.Files))
		for k := range l.Files {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			tw.WriteHeader(&tar.Header{Name: k, Mode: 0o600, Size: int64(len(l.Files[k])), Typeflag: tar.TypeReg})
			tw.Write(l.Files[k])
		}
		tw.Close()
		w.Write(buf.Bytes())
	case "GET " + par.PathRows:
		for _, rs := range l.Rows {
			for _, row := range rs {
				fmt.Fprintln(w, row)
			}
		}
	case "GET " + par.PathErrors:
		for _, e := range l.Errors {
			fmt.Fprintln(w, e)
		}
	default:
		http.NotFound(w, r)
	}
}

func (l *Ledger) lease(req par.LeaseRequest) par.LeaseResponse {
	if l.Aborted != "" {
		return par.LeaseResponse{State: par.StateAbort, Message: l.Aborted}
	}
	if l.Plan == nil {
		l.T.Errorf("lease before any plan")
		return par.LeaseResponse{State: par.StateWait, WaitSeconds: 0.01}
	}
	var out []par.Lease
	inFlight := false
	for i, s := range l.State {
		switch {
		case s == "pending" && len(out) < req.Max:
			l.State[i], l.RankOf[i] = "leased", req.Rank
			l.Tries[i]++
			out = append(out, par.Lease{Index: i, Try: l.Tries[i]})
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

func (l *Ledger) complete(req par.CompleteRequest) par.CompleteResponse {
	i := req.Index
	if l.Plan == nil || i < 0 || i >= len(l.State) || l.State[i] != "leased" || l.Tries[i] != req.Try {
		return par.CompleteResponse{State: par.CompletedStale}
	}
	if req.Outcome == par.OutcomeDone && l.WantFiles != nil {
		for _, f := range l.WantFiles(i) {
			if _, ok := l.Files[f]; !ok {
				l.MissingFiles = append(l.MissingFiles, f)
			}
		}
	}
	state := par.CompletedDone
	switch req.Outcome {
	case par.OutcomeDone:
		l.State[i], l.Rows[i] = "done", req.Rows
	default:
		if l.Tries[i] <= l.MaxRetries {
			l.State[i] = "pending"
			return par.CompleteResponse{State: par.CompletedRetry}
		}
		l.State[i], state = "failed", par.CompletedFailed
		l.Failed++
		if len(req.FailedItems) == 0 {
			l.Errors = append(l.Errors, fmt.Sprintf("%d\t\t%s", i, oneLine(req.Error)))
		}
	}
	for _, f := range req.FailedItems {
		l.Items++
		l.Errors = append(l.Errors, fmt.Sprintf("%d\t%s\t%s", i, f.Item, oneLine(f.Error)))
	}
	if (l.MBThreshold >= 0 && l.Failed > l.MBThreshold) || (l.ItemThreshold >= 0 && l.Items > l.ItemThreshold) {
		l.Aborted = fmt.Sprintf("the error threshold was passed: %d mini-batches and %d items failed", l.Failed, l.Items)
		return par.CompleteResponse{State: state, Abort: l.Aborted}
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

// With calls f with the double locked: to set its settings, or read what
// came in, while a driver may be talking to it.
func (l *Ledger) With(f func(l *Ledger)) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	f(l)
}

// Release gives back the mini-batches leased to rank, as the server does
// when it finds the rank's node lost or preempted: they are pending
// again, for any rank, and their finished ones stay finished.
func (l *Ledger) Release(rank int) []int {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	var out []int
	for i, s := range l.State {
		if s == "leased" && l.RankOf[i] == rank {
			l.State[i] = "pending"
			out = append(out, i)
		}
	}
	l.Log = append(l.Log, fmt.Sprintf("release r%d %v", rank, out))
	return out
}

// Snapshot reads what came in, under the lock.
func (l *Ledger) Snapshot() (log []string, completes []par.CompleteRequest, plans []par.PlanRequest) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return append([]string(nil), l.Log...), append([]par.CompleteRequest(nil), l.Completes...), append([]par.PlanRequest(nil), l.Plans...)
}
