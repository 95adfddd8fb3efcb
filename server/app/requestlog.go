package app

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/internal/httpstatus"
)

// slowRequest is how long an ordinary (not streamed, not long-polled)
// request may take before it is logged as a warning.
const slowRequest = 2 * time.Second

// requestLog logs each request's method, path, status and duration (and
// for a 5xx what the caller was answered, see httpx.FailureNote): at
// debug level normally (one line per request drowned the log: 1,069 lines
// in 7 minutes of a tour), as a warning when the server failed (5xx) or
// an ordinary request was slow. Headers are never logged: they carry
// tokens.
type requestLog struct {
	next http.Handler
	log  *slog.Logger
	slow time.Duration
}

func withRequestLog(next http.Handler, log *slog.Logger) http.Handler {
	return &requestLog{next: next, log: log, slow: slowRequest}
}

func (h *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &flushWatch{Writer: httpstatus.Wrap(w)}
	ctx, failure := httpx.NoteFailures(r.Context())
	h.next.ServeHTTP(rec, r.WithContext(ctx))
	took := time.Since(start)
	level, msg := slog.LevelDebug, "request"
	switch {
	case rec.Status >= 500:
		level = slog.LevelWarn
	case took >= h.slow && !rec.flushed && r.URL.Query().Get("wait") == "":
		// Streams flush and agents' long polls say how long they wait:
		// both are slow by design.
		level, msg = slog.LevelWarn, "slow request"
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.Status), slog.Duration("took", took)}
	if why := failure.Message(); why != "" && rec.Status >= 500 {
		// What the caller was answered (an application that did not
		// answer, a store that is away), not just its status.
		attrs = append(attrs, slog.String("err", why))
	}
	h.log.LogAttrs(r.Context(), level, msg, attrs...)
}

// flushWatch remembers whether the answer was streamed.
type flushWatch struct {
	*httpstatus.Writer
	flushed bool
}

// WriteHeader closes the connection after an answer the server failed
// (5xx): a client whose connection a balancer gave to this server keeps
// it alive and would put its retry to the same server; closed, the retry
// dials the balancer again, which sends it to a replica that is ready. A
// server cut from its database answered an agent's result report 500 on
// the same kept-alive connection for a minute and a half while the other
// server led (TestLeaderPartitionedFromDatabase).
func (f *flushWatch) WriteHeader(code int) {
	if code >= 500 {
		f.Header().Set("Connection", "close")
	}
	f.Writer.WriteHeader(code)
}

// Flush marks the answer as streamed and passes the flush on.
func (f *flushWatch) Flush() {
	f.flushed = true
	f.Writer.Flush()
}

// Unwrap lets http.ResponseController reach the connection (hijacking for
// WebSockets).
func (f *flushWatch) Unwrap() http.ResponseWriter { return f.Writer }
