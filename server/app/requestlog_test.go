package app

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/domain/core"
)

// logRequests runs h once through withRequestLog at the given level and
// returns what was logged.
func logRequests(t *testing.T, level slog.Level, slow time.Duration, h http.HandlerFunc, target string) string {
	t.Helper()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
	rl := withRequestLog(h, log)
	rl.(*requestLog).slow = slow
	rl.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, target, nil))
	return buf.String()
}

func TestRequestLogOrdinaryRequestsAreDebug(t *testing.T) {
	ok := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }
	if got := logRequests(t, slog.LevelInfo, time.Hour, ok, "/x"); got != "" {
		t.Fatalf("an ordinary request was logged at info: %q", got)
	}
	if got := logRequests(t, slog.LevelDebug, time.Hour, ok, "/x"); !strings.Contains(got, "level=DEBUG") || !strings.Contains(got, "path=/x") {
		t.Fatalf("at debug the request is not logged: %q", got)
	}
}

func TestRequestLogServerErrorsAndSlowRequestsAreWarnings(t *testing.T) {
	fail := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }
	if got := logRequests(t, slog.LevelInfo, time.Hour, fail, "/x"); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "status=500") {
		t.Fatalf("a 500 is not a warning: %q", got)
	}
	slow := func(w http.ResponseWriter, r *http.Request) { time.Sleep(20 * time.Millisecond) }
	if got := logRequests(t, slog.LevelInfo, time.Millisecond, slow, "/x"); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "slow request") {
		t.Fatalf("a slow request is not a warning: %q", got)
	}
	// Long polls and streams are slow by design.
	if got := logRequests(t, slog.LevelInfo, time.Millisecond, slow, "/agent/sync?wait=30s"); got != "" {
		t.Fatalf("a long poll was logged as slow: %q", got)
	}
	stream := func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
	}
	if got := logRequests(t, slog.LevelInfo, time.Millisecond, stream, "/x"); got != "" {
		t.Fatalf("a streamed answer was logged as slow: %q", got)
	}
	// A client's mistake is not the server's: 4xx stay at debug.
	bad := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) }
	if got := logRequests(t, slog.LevelInfo, time.Hour, bad, "/x"); got != "" {
		t.Fatalf("a 404 was logged at info: %q", got)
	}
}

// An answer the server failed closes its connection, so that a client's
// retry dials (through a balancer) again instead of reaching the same
// server on the kept-alive connection; other answers keep it open.
func TestServerErrorsCloseTheConnection(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	srv := httptest.NewServer(withRequestLog(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "store unreachable", http.StatusInternalServerError)
		case "/busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}), log))
	defer srv.Close()
	for path, closed := range map[string]bool{"/fail": true, "/busy": true, "/ok": false} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Close != closed {
			t.Errorf("%s: %d answered with the connection closed %v, want %v", path, resp.StatusCode, resp.Close, closed)
		}
	}
}

// A 5xx's line says what the caller was answered, as the handler wrote
// it through httpx.Errors (an application that did not answer): the
// status alone told nothing when CI's notebook WebSocket got a 502. An
// internal error's detail is not repeated (it is logged where it is
// written, and the caller is shown a generic message), nor is a
// client's mistake noted.
func TestRequestLogSaysWhyTheServerFailed(t *testing.T) {
	errs := httpx.Errors{Log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		err     error
		want    string
		wantErr bool
	}{
		{core.Errorf(core.EUNAVAILABLE, "application jupyter does not answer yet (dial tcp: connection refused)"), "status=502", true},
		{core.Errorf(core.EINTERNAL, "secret detail"), "status=500", false},
		{core.Errorf(core.ENOTFOUND, "no such job"), "", false},
	} {
		got := logRequests(t, slog.LevelInfo, time.Hour, func(w http.ResponseWriter, r *http.Request) { errs.Write(w, r, tc.err) }, "/x")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%v: logged %q, want %s", tc.err, got, tc.want)
		}
		if has := strings.Contains(got, `err=`); has != tc.wantErr {
			t.Errorf("%v: logged %q; want its cause logged %v", tc.err, got, tc.wantErr)
		}
		if tc.wantErr && !strings.Contains(got, "connection refused") {
			t.Errorf("%v: logged %q without the caller's message", tc.err, got)
		}
		if strings.Contains(got, "secret detail") {
			t.Errorf("an internal error's detail in the request log: %q", got)
		}
	}
}
