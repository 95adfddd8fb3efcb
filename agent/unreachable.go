package agent

import (
	"log/slog"
	"sync"
	"time"
)

// SummaryInterval is how often an agent that cannot reach its server
// says so again while the outage lasts.
const SummaryInterval = 5 * time.Minute

// outageLog keeps an agent's log short while its server is away: the first
// failure is logged, then one summary every SummaryInterval ("server
// unreachable for 12m0s, 3 results waiting"), and one line when the server
// answers again. A node whose server is gone for a day writes a few hundred
// lines, not one per retry. Safe for concurrent use: the sync loop and the
// result outbox share it.
type outageLog struct {
	log   *slog.Logger
	now   func() time.Time
	every time.Duration
	// status describes what the node holds (results waiting, ranks
	// running) for the summary lines.
	status func() []any

	mu          sync.Mutex
	since       time.Time // first failure of the current outage; zero when none
	lastLine    time.Time
	failures    int
	lastErr     string
	suppressed  int
	lastSuccess time.Time
}

// newOutageLog returns an outageLog writing to log, reading time from now.
func newOutageLog(log *slog.Logger, now func() time.Time, every time.Duration, status func() []any) *outageLog {
	return &outageLog{log: log, now: now, every: every, status: status, lastSuccess: now()}
}

// failed records a failed call to the server.
func (o *outageLog) failed(what string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	o.failures++
	o.lastErr = err.Error()
	if o.since.IsZero() {
		o.since, o.lastLine = now, now
		o.log.Warn("server unreachable; running jobs keep running and their results are kept on disk until it answers",
			append([]any{"call", what, "err", err}, o.status()...)...)
		return
	}
	if now.Sub(o.lastLine) < o.every {
		o.suppressed++
		return
	}
	o.lastLine = now
	args := []any{"for", now.Sub(o.since).Round(time.Second), "failed_calls", o.failures, "last_err", o.lastErr}
	o.log.Warn("server still unreachable", append(args, o.status()...)...)
	o.suppressed = 0
}

// succeeded records an answer from the server, closing an outage.
func (o *outageLog) succeeded() {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	o.lastSuccess = now
	if o.since.IsZero() {
		return
	}
	o.log.Info("server reachable again", "after", now.Sub(o.since).Round(time.Second), "failed_calls", o.failures)
	o.since, o.failures, o.suppressed, o.lastErr = time.Time{}, 0, 0, ""
}

// lastContact is when the server last answered.
func (o *outageLog) lastContact() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastSuccess
}
