// Package sqlite implements shoal.Store on SQLite, using the pure-Go driver
// modernc.org/sqlite.
//
// The queries live in package sqlstore, shared with the PostgreSQL store;
// only opening the file and the migration DDL are specific to SQLite.
//
// A DB holds two connection pools on the same file: a single write
// connection whose transactions begin IMMEDIATE, so that concurrent Update
// calls queue in Go instead of failing with "database is locked", and a pool
// of query-only connections for View, which in WAL mode read concurrently
// with the writer. Each pool keeps its queries prepared (see sqlstore/stmtcache).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore"
	"github.com/shoal-ml/shoal/store/sqlstore/migrate"
	"github.com/shoal-ml/shoal/store/sqlstore/stmtcache"
	"github.com/shoal-ml/shoal/store/sqlstore/storecopy"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// migrationFS holds the SQLite schema, migrations/NNNN_name.sql.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// busyTimeoutMS is how long a connection waits for a lock held by another
// connection (or process) before it fails with SQLITE_BUSY.
const busyTimeoutMS = 10000

// Config configures Open.
type Config struct {
	// Path is the database file. Its parent directory is created if needed.
	Path string
	// Clock gives transactions their time; nil means shoal.SystemClock{}.
	Clock core.Clock
	// Logger receives migration and lifecycle messages; nil discards them.
	Logger *slog.Logger
}

// DB is a shoal.Store backed by a SQLite file. It is safe for concurrent use.
type DB struct {
	rw      *sql.DB // one connection; transactions begin IMMEDIATE
	ro      *sql.DB // query-only connections for View
	rwStmts *stmtcache.Cache
	roStmts *stmtcache.Cache
	clock   core.Clock
	log     *slog.Logger
	path    string
	readers int // ro's size
}

var _ store.Store = (*DB)(nil)

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
		db.clock = core.SystemClock{}
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
	if err := migrate.Apply(ctx, db.rw, migrationFS, nil, db.clock, db.log); err != nil {
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
	db.readers = n
	db.ro.SetMaxOpenConns(n)
	db.ro.SetMaxIdleConns(n)
	if err := db.ro.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %q for reading: %w", path, err)
	}
	db.rwStmts, db.roStmts = stmtcache.New(db.rw), stmtcache.New(db.ro)
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
func (db *DB) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return db.run(ctx, db.rw, db.rwStmts, false, fn)
}

// View runs fn in a read-only transaction that sees a consistent snapshot.
// Writes inside it fail.
func (db *DB) View(ctx context.Context, fn func(tx store.Tx) error) error {
	return db.run(ctx, db.ro, db.roStmts, true, fn)
}

func (db *DB) run(ctx context.Context, h *sql.DB, stmts *stmtcache.Cache, readOnly bool, fn func(tx store.Tx) error) error {
	return sqlstore.Run(ctx, h, stmts, &sql.TxOptions{ReadOnly: readOnly}, db.clock.Now(), nil, fn)
}

// ReadConns is the size of the pool of read connections (shoal.ReadPool).
func (db *DB) ReadConns() int { return db.readers }

// Close closes the database. Transactions in progress must have ended.
func (db *DB) Close() error {
	var errs []error
	for _, c := range []*stmtcache.Cache{db.roStmts, db.rwStmts} {
		if c != nil {
			errs = append(errs, c.Close())
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

// CopyEndpoint is the database as a copy's source or destination
// (backups, restores, moving to another store): read through the
// query-only pool, written through the writer.
func (db *DB) CopyEndpoint() storecopy.Endpoint {
	return storecopy.Endpoint{DB: db.rw, Read: db.ro, ReadOptions: &sql.TxOptions{ReadOnly: true}}
}
