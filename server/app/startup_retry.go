package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// startupRetryFor bounds how long a start-up step that writes to the store
// is retried on transient errors before the server gives up.
const startupRetryFor = 15 * time.Second

// retryStartup runs a start-up step that writes to the store, retrying it
// with backoff while it fails transiently (a store error, a full disk):
// a server restarted while its store hiccups comes up once the store
// answers, rather than exiting. Errors that are answers (invalid data,
// conflicts) end it at once, and so does a store that stays down.
func (m *Main) retryStartup(ctx context.Context, what string, step func(context.Context) error) error {
	deadline := time.Now().Add(startupRetryFor)
	backoff := 100 * time.Millisecond
	for {
		err := step(ctx)
		if err == nil || !core.Transient(core.ErrorCode(err)) || time.Now().After(deadline) {
			return err
		}
		m.log.Warn("start-up step failed; retrying", slog.String("step", what), slog.Any("err", err), slog.Duration("in", backoff))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}
