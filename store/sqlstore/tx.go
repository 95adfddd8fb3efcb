// Package sqlstore implements shoal.Tx once, in SQL that SQLite and
// PostgreSQL both run ($n placeholders, no engine-only functions, times as
// BIGINT unix microseconds, booleans as INTEGER 0/1, JSON as TEXT): the
// sqlite and postgres stores open their databases, apply their own
// migrations (sqlstore/migrate) and run transactions through Run (or, on
// PostgreSQL, group them with sqlstore/batch); everything a transaction
// reads and writes is here. What is not a query lives in sub-packages:
// the statement cache (stmtcache), the entities' JSON documents
// (entitydoc), disk-full classification (diskfull),
// the chaos suite's failpoints (failpoint) and whole-store copies
// (storecopy).
package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/appendlog"
	"github.com/shoal-ml/shoal/store/sqlstore/assetstore"
	"github.com/shoal-ml/shoal/store/sqlstore/blobstore"
	"github.com/shoal-ml/shoal/store/sqlstore/diskfull"
	"github.com/shoal-ml/shoal/store/sqlstore/failpoint"
	"github.com/shoal-ml/shoal/store/sqlstore/identstore"
	"github.com/shoal-ml/shoal/store/sqlstore/nodecounts"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
	"github.com/shoal-ml/shoal/store/sqlstore/stmtcache"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// run runs fn and commits, or rolls back when fn fails or panics, or
// when discard says so (failpoint.RunAgain).
func (t *tx) run(fn func(tx store.Tx) error, discard bool) error {
	stx := t.tx
	committed := false
	defer func() {
		if !committed {
			_ = stx.Rollback()
		}
	}()
	if err := fn(t); err != nil || discard {
		return err
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	committed = true
	return nil
}

// tx implements shoal.Tx on a database/sql transaction.
type tx struct {
	ctx      context.Context
	tx       *sql.Tx
	stmts    *stmtcache.Cache
	now      time.Time
	readOnly bool
	// unprepared are the queries run without a cached statement.
	unprepared []string
	// cache keeps the transaction's reads of rarely written rows
	// (ReadCache); nil keeps none.
	cache *ReadCache
	// gen is this transaction's view generation once it has written a
	// node, compute, workspace or quota (0 before: viewgen.go);
	// genComputes says it stamped computes_gen.
	gen         int64
	genComputes bool
	// log keeps the events and audit records appended until the batch
	// writes them before it commits (Within); nil writes each at once.
	log *appendlog.Log
	// Queries are the identity queries (package identstore), embedded
	// so that they are the transaction's own methods.
	identstore.Queries
	// Blobs are the blob queries (package blobstore), likewise.
	blobstore.Blobs
	// Assets are the queries of versioned assets, registry logins and
	// datastores (package assetstore), likewise.
	assetstore.Assets
	// Counts are the queries that count a compute's nodes, now and over
	// time (package nodecounts).
	nodecounts.Counts
}

var _ store.Tx = (*tx)(nil)

// errReadOnly is returned by writes attempted in a View transaction.
var errReadOnly = sqlq.ErrReadOnly

func (t *tx) Now() time.Time { return t.now }

// writable returns an error when t is read-only.
func (t *tx) writable(op string) error {
	if t.readOnly {
		return fmt.Errorf("%s: %w", op, errReadOnly)
	}
	return nil
}

// stored returns t as it reads back from the database.
func stored(t time.Time) time.Time { return sqlq.FromMicros(sqlq.Micros(t)) }

// boolInt converts a bool to its stored form.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// key is the case-insensitive form of a name.
func key(name string) string { return strings.ToLower(name) }

// update runs the UPDATE statement fast and, when it changes no row, full,
// both with args, and returns the rows changed. SQLite rewrites the entries
// of every index on a column that SET names, whether its value changes or
// not. So fast leaves out of SET the indexed columns that rarely change and
// instead matches only rows where they already hold args; full sets them.
func (t *tx) update(fast, full string, args ...any) (int64, error) {
	res, err := t.exec(fast, args...)
	if err != nil {
		return 0, err
	}
	if n, err := affected(res); err != nil || n > 0 {
		return n, err
	}
	res, err = t.exec(full, args...)
	if err != nil {
		return 0, err
	}
	return affected(res)
}

// deleteOne runs a DELETE that must remove exactly one row (sqlq.DeleteOne).
func (t *tx) deleteOne(what, missing, query string, args ...any) error {
	if err := t.writable("delete " + what); err != nil {
		return err
	}
	return sqlq.DeleteOne(querier{t}, what, missing, query, args...)
}

var affected = sqlq.Affected

// Run runs fn in a transaction begun on h with opts, whose time is now
// (truncated to the stored precision), and commits it when fn returns nil;
// otherwise it rolls back and returns fn's error unchanged, but for a full
// disk, which becomes a storage_full error (diskfull.Classify). before, when
// set, runs first inside the transaction (a store's own first
// statement). The statements fn ran unprepared are prepared in stmts
// afterwards, once the transaction has released its connection.
func Run(ctx context.Context, h *sql.DB, stmts *stmtcache.Cache, opts *sql.TxOptions, now time.Time, before func(context.Context, *sql.Tx) error, fn func(tx store.Tx) error) error {
	if (opts == nil || !opts.ReadOnly) && failpoint.RunAgain() {
		// The tests that look for an Update not safe to run twice: a
		// first run rolled back, as PostgreSQL's serialization failure
		// rolls one back (batch.Batcher's Retry). Its own error is the
		// write's, as it would be.
		if err := runOnce(ctx, h, stmts, opts, now, before, fn, true); err != nil {
			return err
		}
	}
	return runOnce(ctx, h, stmts, opts, now, before, fn, false)
}

// runOnce is Run's one transaction; discard rolls it back where it would
// commit.
func runOnce(ctx context.Context, h *sql.DB, stmts *stmtcache.Cache, opts *sql.TxOptions, now time.Time, before func(context.Context, *sql.Tx) error, fn func(tx store.Tx) error, discard bool) error {
	began := time.Now() // latency is wall time, whatever the store's clock says
	if err := failpoint.Check(); err != nil {
		return err
	}
	stx, err := h.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("store: begin transaction: %w", err)
	}
	// Begun: a write transaction holds the writer from here (SQLite's one
	// write connection was waited for in BeginTx). Wall time, as began's:
	// the write-path metric measures it, no decision reads it.
	held := time.Now()
	if before != nil {
		if err := before(ctx, stx); err != nil {
			_ = stx.Rollback()
			return err
		}
	}
	t := &tx{
		ctx:      ctx,
		tx:       stx,
		stmts:    stmts,
		now:      now.UTC().Truncate(time.Microsecond),
		readOnly: opts != nil && opts.ReadOnly,
		cache:    NewReadCache(),
	}
	t.Queries = identstore.New(querier{t}, t.now, t.readOnly)
	t.Blobs = blobstore.New(querier{t}, t.now, t.readOnly)
	t.Assets = assetstore.New(querier{t}, t.now, t.readOnly)
	t.Counts = nodecounts.New(querier{t}, t.now, t.readOnly)
	err = diskfull.Classify(t.run(fn, discard))
	if len(t.unprepared) > 0 && stmts != nil {
		stmts.Prepare(ctx, t.unprepared)
	}
	txobserve.Transaction(t.readOnly, time.Since(began), err)
	if !t.readOnly {
		txobserve.Write(1, time.Since(held))
	}
	return err
}

// Within runs fn on a transaction over stx, which the caller has begun and
// commits or rolls back (a batch.Batcher's, each Update in a savepoint):
// ctx gives its statements their values, now its time. cache (nil for
// none) is the ReadCache of stx, shared by the calls that run in it; the
// caller resets it when it rolls back to a savepoint. log (nil for none)
// keeps the events and audit records fn appends for the caller to write
// before it commits (appendlog.Log.Flush), and to undo with a rollback to
// a savepoint. The queries fn ran unprepared join *unprepared, even when
// fn panics, for the caller to prepare in stmts once stx has ended.
func Within(ctx context.Context, stx *sql.Tx, stmts *stmtcache.Cache, cache *ReadCache, log *appendlog.Log, now time.Time, fn func(store.Tx) error, unprepared *[]string) error {
	t := &tx{ctx: ctx, tx: stx, stmts: stmts, cache: cache, log: log, now: now.UTC().Truncate(time.Microsecond)}
	t.Queries = identstore.New(querier{t}, t.now, false)
	t.Queries.Log = log
	t.Blobs = blobstore.New(querier{t}, t.now, false)
	t.Assets = assetstore.New(querier{t}, t.now, false)
	t.Counts = nodecounts.New(querier{t}, t.now, false)
	defer func() { *unprepared = append(*unprepared, t.unprepared...) }()
	return fn(t)
}

// stmt returns the cached statement of query bound to t, or nil after
// noting query for preparing once t has ended.
func (t *tx) stmt(query string) *sql.Stmt {
	if t.stmts == nil {
		return nil // the driver keeps its own (PostgreSQL: pgx's cache)
	}
	if s := t.stmts.Get(query); s != nil {
		return t.tx.StmtContext(t.ctx, s)
	}
	if !t.stmts.Full() && !slices.Contains(t.unprepared, query) {
		t.unprepared = append(t.unprepared, query)
	}
	return nil
}

func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	t.cache.Forget(query)
	txobserve.Statement(t.ctx)
	if s := t.stmt(query); s != nil {
		return s.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

func (t *tx) query(query string, args ...any) (*sql.Rows, error) {
	t.cache.Forget(query)
	txobserve.Statement(t.ctx)
	if s := t.stmt(query); s != nil {
		return s.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, query, args...)
}

func (t *tx) queryRow(query string, args ...any) *sql.Row {
	t.cache.Forget(query)
	txobserve.Statement(t.ctx)
	if s := t.stmt(query); s != nil {
		return s.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, query, args...)
}
