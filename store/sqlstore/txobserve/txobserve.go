// Package txobserve tells the server's store-latency metric of every
// transaction the SQL stores run (sqlstore.Run, a batch.Batcher's
// Updates), apart from the transactions themselves, and counts the
// statements run for a context that asks (CountStatements, for tests).
package txobserve

import (
	"context"
	"sync/atomic"
	"time"
)

// observer, when set, is told every transaction's kind, duration and
// outcome (the server's store-latency metric).
var observer atomic.Pointer[func(readOnly bool, d time.Duration, err error)]

// Set installs the transaction observer (nil removes it). The server sets
// it once at start-up; tests leave it unset.
func Set(f func(readOnly bool, d time.Duration, err error)) {
	if f == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&f)
}

// Transaction tells the observer, when one is set, of a transaction's
// kind, duration and outcome.
func Transaction(readOnly bool, d time.Duration, err error) {
	if o := observer.Load(); o != nil {
		(*o)(readOnly, d, err)
	}
}

// writes, when set, is told of every write transaction once it ends: how
// many Updates it carried (more than one when a batch shared it) and how
// long it held the store's writer (SQLite's one write connection; on
// PostgreSQL from its begin to its commit, a server's writes running one
// batch at a time). Its rate over a run says how busy the write
// path was: near one second a second, the writes are the bound.
var writes atomic.Pointer[func(updates int, held time.Duration)]

// SetWrites installs the write observer (nil removes it). The server sets
// it once at start-up; tests leave it unset.
func SetWrites(f func(updates int, held time.Duration)) {
	if f == nil {
		writes.Store(nil)
		return
	}
	writes.Store(&f)
}

// Write tells the write observer, when one is set, of a write
// transaction's Updates and of how long it held the writer.
func Write(updates int, held time.Duration) {
	if o := writes.Load(); o != nil {
		(*o)(updates, held)
	}
}

// statementsKey is the context key of a statement counter.
type statementsKey struct{}

// counting says a statement counter was ever installed: until then a
// statement costs no context lookup.
var counting atomic.Bool

// CountStatements returns ctx with n counting the statements that the SQL
// stores' transactions run on its behalf (sqlstore's own; not BEGIN,
// COMMIT, savepoints or a batch's fence check). On PostgreSQL each is a
// round trip, so a test pins a path's round trips with it.
func CountStatements(ctx context.Context, n *atomic.Int64) context.Context {
	counting.Store(true)
	return context.WithValue(ctx, statementsKey{}, n)
}

// Statement counts one statement run for ctx, when ctx counts them.
func Statement(ctx context.Context) {
	if !counting.Load() {
		return
	}
	if n, ok := ctx.Value(statementsKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}
