package postgres

import (
	"context"
	"time"
)

// changesChannel is the channel every committed change notifies.
const changesChannel = "shoal_changes"

// ListenChanges calls changed after changes committed by any other
// server sharing the database (several in a row may come as one call),
// until ctx ends. Changes made through this handle are skipped: the
// server that made them woke its own controllers as it made them, where
// a pass could find something to do (as on SQLite, which has no other
// server); a pass over every queue for each of its own writes was most
// of the leader's passes on the job path. It holds one connection of the pool, and reconnects with
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
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Payload == db.origin {
			continue // this server's own: it woke its controllers already where it had to
		}
		changed()
	}
}
