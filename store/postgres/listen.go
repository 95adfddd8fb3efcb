package postgres

import (
	"context"
	"time"
)

// changesChannel is the channel every committed change notifies.
const changesChannel = "shoal_changes"

// ListenChanges calls changed after changes committed by any server
// sharing the database (several in a row may come as one call), until
// ctx ends. It holds one connection of the pool, and reconnects with
// backoff when the connection is lost (then it calls changed once: what
// happened meanwhile is unknown).
func (db *DB) ListenChanges(ctx context.Context, changed func()) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := db.listenOnce(ctx, changed)
		if ctx.Err() != nil {
			return
		}
		db.log.Warn("listening for changes failed; retrying", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
		changed()
	}
}

func (db *DB) listenOnce(ctx context.Context, changed func()) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection will be LISTENing: it leaves the pool for good.
	pc := conn.Hijack()
	defer pc.Close(context.WithoutCancel(ctx))
	if _, err := pc.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return err
	}
	for {
		if _, err := pc.WaitForNotification(ctx); err != nil {
			return err
		}
		changed()
	}
}
