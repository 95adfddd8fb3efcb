// Package sqlite implements shoal.Store on SQLite, using the pure-Go driver
// modernc.org/sqlite.
//
// The queries are kept portable to PostgreSQL ($n placeholders, no
// SQLite-only functions, times as BIGINT unix microseconds, booleans as
// INTEGER 0/1, JSON as TEXT) so that another store can share them; only the
// migration DDL is specific to SQLite.
//
// A DB holds two connection pools on the same file: a single write
// connection whose transactions begin IMMEDIATE, so that concurrent Update
// calls queue in Go instead of failing with "database is locked", and a pool
// of query-only connections for View, which in WAL mode read concurrently
// with the writer. Each pool keeps its queries prepared (see stmtCache).
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// busyTimeoutMS is how long a connection waits for a lock held by another
// connection (or process) before it fails with SQLITE_BUSY.
const busyTimeoutMS = 10000

// Config configures Open.
type Config struct {
	// Path is the database file. Its parent directory is created if needed.
	Path string
	// Clock gives transactions their time; nil means shoal.SystemClock{}.
	Clock shoal.Clock
	// Logger receives migration and lifecycle messages; nil discards them.
	Logger *slog.Logger
}

// DB is a shoal.Store backed by a SQLite file. It is safe for concurrent use.
type DB struct {
	rw      *sql.DB // one connection; transactions begin IMMEDIATE
	ro      *sql.DB // query-only connections for View
	rwStmts *stmtCache
	roStmts *stmtCache
	clock   shoal.Clock
	log     *slog.Logger
	path    string
}

var _ shoal.Store = (*DB)(nil)

// Open opens (creating if needed) the database at cfg.Path, configures it
// (WAL, busy timeout, foreign keys, synchronous=NORMAL) and applies pending
// migrations.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.Path == "" {
		return nil, errors.New("sqlite: database path is empty")
	}
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resolve database path %q: %w", cfg.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("sqlite: create directory for database %q: %w", path, err)
	}
	db := &DB{clock: cfg.Clock, log: cfg.Logger, path: path}
	if db.clock == nil {
		db.clock = shoal.SystemClock{}
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}

	db.rw, err = sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	// A single writer: Update calls wait for the connection in database/sql
	// rather than contend for SQLite's write lock.
	db.rw.SetMaxOpenConns(1)
	db.rw.SetMaxIdleConns(1)
	db.rw.SetConnMaxLifetime(0)
	db.rw.SetConnMaxIdleTime(0)
	if err := db.rw.PingContext(ctx); err != nil {
		db.rw.Close()
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	if err := migrate(ctx, db.rw, db.clock, db.log); err != nil {
		db.rw.Close()
		return nil, fmt.Errorf("sqlite: migrate %q: %w", path, err)
	}

	// Readers are opened after the writer has switched the file to WAL.
	db.ro, err = sql.Open("sqlite", dsn(path, true))
	if err != nil {
		db.rw.Close()
		return nil, fmt.Errorf("sqlite: open %q for reading: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	db.ro.SetMaxOpenConns(n)
	db.ro.SetMaxIdleConns(n)
	if err := db.ro.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %q for reading: %w", path, err)
	}
	db.rwStmts, db.roStmts = newStmtCache(db.rw), newStmtCache(db.ro)
	db.log.Debug("sqlite store opened", "path", path)
	return db, nil
}

// dsn returns the driver DSN for path: a file: URI (so that any character in
// the path is escaped) with the connection settings as parameters.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		// Writes through a reader fail at the SQL level too, not just in Tx.
		q.Set("_query_only", "1")
		q.Set("_txlock", "deferred")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows drive letters: file:/C:/...
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Update runs fn in a read-write transaction and commits it when fn returns
// nil; otherwise it rolls back and returns fn's error unchanged. Updates are
// serialised. fn must not call Update itself: it would wait forever for the
// single write connection.
func (db *DB) Update(ctx context.Context, fn func(tx shoal.Tx) error) error {
	return db.run(ctx, db.rw, db.rwStmts, false, fn)
}

// View runs fn in a read-only transaction that sees a consistent snapshot.
// Writes inside it fail.
func (db *DB) View(ctx context.Context, fn func(tx shoal.Tx) error) error {
	return db.run(ctx, db.ro, db.roStmts, true, fn)
}

func (db *DB) run(ctx context.Context, h *sql.DB, stmts *stmtCache, readOnly bool, fn func(tx shoal.Tx) error) error {
	stx, err := h.BeginTx(ctx, &sql.TxOptions{ReadOnly: readOnly})
	if err != nil {
		return fmt.Errorf("sqlite: begin transaction: %w", err)
	}
	t := &tx{
		ctx:      ctx,
		tx:       stx,
		stmts:    stmts,
		now:      db.clock.Now().UTC().Truncate(time.Microsecond),
		readOnly: readOnly,
	}
	err = t.run(fn)
	// The transaction has released its connection: prepare what it ran
	// unprepared.
	if len(t.unprepared) > 0 {
		stmts.prepare(ctx, t.unprepared)
	}
	return err
}

// run runs fn and commits, or rolls back when fn fails or panics.
func (t *tx) run(fn func(tx shoal.Tx) error) error {
	stx := t.tx
	committed := false
	defer func() {
		if !committed {
			_ = stx.Rollback()
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	committed = true
	return nil
}

// Close closes the database. Transactions in progress must have ended.
func (db *DB) Close() error {
	var errs []error
	for _, c := range []*stmtCache{db.roStmts, db.rwStmts} {
		if c != nil {
			errs = append(errs, c.close())
		}
	}
	if db.ro != nil {
		errs = append(errs, db.ro.Close())
	}
	if db.rw != nil {
		errs = append(errs, db.rw.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close %q: %w", db.path, err)
	}
	return nil
}

// tx implements shoal.Tx on a database/sql transaction.
type tx struct {
	ctx      context.Context
	tx       *sql.Tx
	stmts    *stmtCache
	now      time.Time
	readOnly bool
	// unprepared are the queries run without a cached statement.
	unprepared []string
}

var _ shoal.Tx = (*tx)(nil)

// errReadOnly is returned by writes attempted in a View transaction.
var errReadOnly = errors.New("sqlite: write in a read-only transaction")

func (t *tx) Now() time.Time { return t.now }

// writable returns an error when t is read-only.
func (t *tx) writable(op string) error {
	if t.readOnly {
		return fmt.Errorf("%s: %w", op, errReadOnly)
	}
	return nil
}

// micros converts a time to what is stored: unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros converts a stored time back, in UTC.
func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// stored returns t as it reads back from the database.
func stored(t time.Time) time.Time { return fromMicros(micros(t)) }

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

// affected returns the rows a statement changed.
// deleteOne runs a DELETE that must remove exactly one row. what names the
// row in messages ("compute default/cpu"); missing is the ENOTFOUND message.
func (t *tx) deleteOne(what, missing, query string, args ...any) error {
	if err := t.writable("delete " + what); err != nil {
		return err
	}
	res, err := t.exec(query, args...)
	if err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", what, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", what, err)
	}
	if n == 0 {
		return shoal.Errorf(shoal.ENOTFOUND, "%s", missing)
	}
	return nil
}

func affected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}
