// Package postgres implements shoal.Store on PostgreSQL with pgx
// (pgxpool, through pgx's database/sql adapter so that the queries of
// package sqlstore, shared with the SQLite store, run unchanged).
//
// Several Shoal servers may share one database. Every Update transaction
// is SERIALIZABLE: PostgreSQL lets the servers' writes run at once and
// commits only those whose outcome is that of some order of them, one
// after another, so read-modify-write changes (ETag checks, counters,
// quotas, placement) keep the rules they have on SQLite, whose single
// writer runs them one by one. Two writes that touch different rows (two
// workspaces' jobs, two clusters' nodes) do not wait for each other; of
// two that read what the other writes, PostgreSQL fails one with a
// serialization failure, and that write runs again (batch.Batcher's
// Retry), reading what the other committed, and alone: every write takes
// the write gate (a table lock, 0041_write_gate.sql) shared in its first
// statement, and a run again takes it exclusive (beginWrite), so it waits
// for the writes in progress and holds up new ones, and meets no other
// write (but in a rare race with the commit of the last write it waited
// for, which costs one run more): a write runs twice at most, all but
// always. Before, every Update took one
// store-wide advisory lock, so a server's writes waited for every other
// server's. The event log is the exception: its IDs must be committed in
// the order they are drawn, since the notifier follows the log by ID, so
// a transaction takes an advisory lock just before it inserts events,
// held for the insert and the commit (logWriter.Events). View
// transactions are REPEATABLE READ and read-only: a consistent snapshot
// that never waits for writers. A write transaction left waiting
// WriteIdleTimeout for its server's next statement is ended by the
// database, so that a server cut off mid-write does not hold its row
// locks (or the event log's) for as long as its dead connection goes
// unnoticed.
//
// The Updates of one server that wait at the same time share a
// transaction (sqlstore/batch), and with it the reads of computes,
// workspaces and workspace limits (sqlstore.ReadCache): a row read again
// in the transaction is not read again from the database. A SERIALIZABLE
// transaction reads one snapshot, taken at its first statement, so the
// row read again would be the same, and PostgreSQL already tracks the
// first read. What bounds the job path is the write transactions'
// statements, each a round trip run one after another
// (docs/internals/reliability.md, "Issue 40 measurements: PostgreSQL"),
// so a batch writes its events and audit records in one statement each
// (sqlstore/appendlog), and every statement is prepared once per
// connection, by pgx's statement cache, and kept for the connection's
// life. PostgreSQL's plan cache then runs as its default (plan_cache_mode
// auto) has it: after five executions it may keep a generic plan, made
// with the statistics of that moment; a plan made while a table was
// nearly empty lasts until autovacuum next analyzes the table. An
// operator who would rather have every execution planned adds
// plan_cache_mode=force_custom_plan to the URL (docs/operations/stores.md).
package postgres

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore"
	"github.com/shoal-ml/shoal/store/sqlstore/appendlog"
	"github.com/shoal-ml/shoal/store/sqlstore/batch"
	"github.com/shoal-ml/shoal/store/sqlstore/migrate"
	"github.com/shoal-ml/shoal/store/sqlstore/storecopy"
)

// migrationFS holds the PostgreSQL schema, migrations/NNNN_name.sql.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// writeLockKey is the advisory lock a migration and a copy into the
// database hold (the ASCII of "shoalwri"): several servers starting at
// once apply each migration once.
const writeLockKey int64 = 0x73686f616c777269

// WriteIdleTimeout is how long the database lets an Update's transaction
// wait for its server's next statement before it ends the session, and
// with it the transaction and its locks. A server cut off from the
// database in the middle of a write (its packets dropped, not refused:
// the database sees no close) would otherwise hold its row locks (and,
// should a run again queue for the write gate behind it, every write)
// until the operating system's TCP keepalive gave up on the connection,
// two hours by default: not the other servers' API calls, nor the leader
// that took over its lease (6 s by default), could write those rows. A
// write's server sends its statements one after another, its own work
// between them taking milliseconds. A database still sending a large
// result to a cut-off server is not idle: it waits for TCP's
// retransmissions to give up (minutes).
const WriteIdleTimeout = 10 * time.Second

// WriteTimeout bounds an Update's transaction on this server's side,
// from its begin to its commit, lock wait included: a server whose
// connection the network stopped carrying fails its writes
// (core.EUNAVAILABLE) instead of waiting for the operating system to give
// up on the connection (minutes), and its next writes take a new
// connection. A batch of Updates writes in milliseconds, the largest (a
// whole-queue pass's reasons) in well under a second.
const WriteTimeout = 30 * time.Second

// MaxWriteRetries bounds how many times more a batch of Updates runs when
// PostgreSQL will not commit it beside another server's write. A run
// again runs alone (beginWrite) and so all but never conflicts again: the
// bound is a guard, not a figure that is reached. Each run again follows a
// random wait of up to 2, 4, … 256 ms; a write that still conflicts fails
// with core.EUNAVAILABLE (HTTP 503), which Azure's SDKs and Shoal's agents
// retry.
const MaxWriteRetries = 8

// writeAloneFor is how long after a run again this server's writes run
// alone from their first run (batch.Batcher.AloneFor). Two servers
// drawing one counter flat out wrote 2,642 times a second run first
// beside each other, against one server's 3,559 (TestTwoServersWritingAtOnce).
const writeAloneFor = 500 * time.Millisecond

// mustRunAgain says whether err is PostgreSQL asking for the transaction
// to be run again: a serialization failure (40001) or a deadlock
// (40P01), both of which roll it back.
func mustRunAgain(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// wasAborted says whether err is a statement refused because the
// transaction was already aborted (25P02), or a commit that rolled back
// instead: what an Update leaves when it took a read's serialization
// failure for the row's absence (some reads mean "if there is one") and
// went on. The batch runs again alone if it ran beside other writes
// (batch.Batcher.Aborted); alone, it is the Update's own error, which
// fails that Update only.
func wasAborted(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25P02" || errors.Is(err, pgx.ErrTxCommitRollback)
}

// beginWrite is a write transaction's first statements: the write gate
// (0041_write_gate.sql), shared or, for a run again, exclusive; then a
// notification for the other servers, which PostgreSQL delivers only if
// the change commits (the leader's controllers react to a change made on
// any server; it names this handle, whose own listener skips it), and the
// bound on the transaction's idle waits (WriteIdleTimeout), for this
// transaction only. origin is rand.Text's: letters and digits only.
func beginWrite(alone bool, origin string) string {
	mode := "ROW SHARE"
	if alone {
		mode = "EXCLUSIVE"
	}
	return `LOCK TABLE write_gate IN ` + mode + ` MODE; SELECT pg_notify('` + changesChannel + `', '` + origin + `'),
		set_config('idle_in_transaction_session_timeout', '` + writeIdle + `', true)`
}

// writeIdle is WriteIdleTimeout as the setting's value, in milliseconds.
var writeIdle = strconv.FormatInt(WriteIdleTimeout.Milliseconds(), 10)

// Config configures Open.
type Config struct {
	// URL is the connection string ("postgres://user:pass@host:5432/db").
	URL string
	// Clock gives transactions their time; nil means shoal.SystemClock{}.
	Clock core.Clock
	// Logger receives migration and lifecycle messages; nil discards them.
	Logger *slog.Logger
	// MaxConns bounds the pool; 0 keeps pgxpool's default.
	MaxConns int32
}

// DB is a shoal.Store backed by PostgreSQL. It is safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	db   *sql.DB
	// batch writes the Updates that wait on one another in one
	// transaction (see Update).
	batch *batch.Batcher
	clock core.Clock
	log   *slog.Logger
	where string // the URL without its password, for messages
	// origin names this handle's changes in their notifications, so
	// that its own listener skips them (ListenChanges).
	origin string
}

var _ store.Store = (*DB)(nil)

// Redact returns a connection URL with its password replaced, for logs
// and messages.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// Open connects to the database at cfg.URL and applies pending migrations
// (several servers starting at once apply each migration once).
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.URL == "" {
		return nil, errors.New("postgres: connection URL is empty")
	}
	where := Redact(cfg.URL)
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		// pgx's message may quote the URL: say what is wrong without it.
		return nil, fmt.Errorf("postgres: %s is not a valid connection URL", where)
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s: %w", where, err)
	}
	db := &DB{pool: pool, db: stdlib.OpenDBFromPool(pool), clock: cfg.Clock, log: cfg.Logger, where: where, origin: rand.Text()}
	if db.clock == nil {
		db.clock = core.SystemClock{}
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	if err := db.db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: connect to %s: %w", where, err)
	}
	if err := migrate.Apply(ctx, db.db, migrationFS, lockWrites, db.clock, db.log); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: migrate %s: %w", where, err)
	}
	// No stmtcache: pgx keeps each connection's prepared statements
	// itself (its statement cache, QueryExecModeCacheStatement), for the
	// connection's life in the pool. A database/sql statement is bound to
	// database/sql's wrapper of the connection, which OpenDBFromPool
	// closes after every transaction (no idle connections): each
	// transaction then prepared every statement it ran again and
	// deallocated it as it ended — two round trips more per statement —
	// and PostgreSQL, seeing each statement run once, planned it at every
	// execution instead of keeping a generic plan.
	db.batch = &batch.Batcher{DB: db.db, Options: &sql.TxOptions{Isolation: sql.LevelSerializable}, Now: db.clock.Now, Timeout: WriteTimeout,
		// A notification for the other servers that PostgreSQL delivers
		// only if the change commits: the leader's controllers react to
		// a change made on any server. It names this handle, whose own
		// listener skips it. And the bound on the transaction's idle
		// waits (WriteIdleTimeout), for this transaction only: in the
		// same statement, so no round trip more.
		// First the write gate, a table lock that takes no snapshot:
		// shared by every write, exclusive for a run again (Retry), which
		// waits for the writes in progress and holds up new ones until
		// it commits, and whose snapshot, taken after it, conflicts with
		// nothing. The statements go in one round trip: no parameters,
		// so pgx sends them with the simple protocol.
		Begin: func(ctx context.Context, tx *sql.Tx, alone bool) error {
			if _, err := tx.ExecContext(ctx, beginWrite(alone, db.origin)); err != nil {
				return fmt.Errorf("postgres: begin a write: %w", err)
			}
			return nil
		},
		Check: checkFence,
		// Two servers' writes that PostgreSQL cannot order (a
		// serialization failure, a deadlock) run again: the one it chose
		// to give way reads, at its next run, what the other committed.
		Retry:      mustRunAgain,
		Aborted:    wasAborted,
		MaxRetries: MaxWriteRetries,
		AloneFor:   writeAloneFor,
		// A batch's events and audit records in one statement each.
		Logs: func(tx *sql.Tx) appendlog.Writer { return logWriter{tx} },
	}
	db.log.Debug("postgres store opened", "url", where)
	return db, nil
}

// lockWrites takes the lock that serialises the servers' migrations and
// a copy into the database, for the rest of tx. Updates do not take it.
func lockWrites(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLockKey); err != nil {
		return fmt.Errorf("postgres: take the migrations' and copies' lock: %w", err)
	}
	return nil
}

// Update runs fn in a SERIALIZABLE read-write transaction and commits it
// when fn returns nil; otherwise fn's changes are rolled back and its
// error returned unchanged. Its outcome is that of every server's Updates
// run one at a time; when PostgreSQL cannot commit it beside another
// server's write, fn runs again in a new transaction (at most
// MaxWriteRetries times more), so fn must have no effect outside tx that
// a second run would repeat. Under a fence (shoal.WithFence: a leader's
// controllers) it fails, writing nothing, once the fence's term is over.
//
// The Updates of this server that arrive while one is being written share
// the next transaction (batch.Batcher), each in a savepoint of its own: a
// batch begins and commits once for all of its Updates instead of once
// each, which is what bounded the job path on PostgreSQL (143 jobs/s
// against SQLite's 294, the writers queueing one round trip at a time).
func (db *DB) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return db.batch.Update(ctx, fn)
}

// Waiting returns how many Updates of this server wait for the batch
// being written (tests queue Updates behind one held in progress with it).
func (db *DB) Waiting() int { return db.batch.Waiting() }

// ReadConns is the size of the connection pool (shoal.ReadPool): reads
// and writes share it.
func (db *DB) ReadConns() int { return int(db.pool.Config().MaxConns) }

// View runs fn in a read-only transaction on a consistent snapshot.
func (db *DB) View(ctx context.Context, fn func(tx store.Tx) error) error {
	return sqlstore.Run(ctx, db.db, nil, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}, db.clock.Now(), nil, fn)
}

// Close closes the pool. Transactions in progress must have ended.
func (db *DB) Close() error {
	var errs []error
	if db.db != nil {
		errs = append(errs, db.db.Close())
	}
	db.pool.Close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("postgres: close %s: %w", db.where, err)
	}
	return nil
}

// CopyEndpoint is the database as a copy's source or destination
// (backups, restores, moving to another store): read on a REPEATABLE READ
// snapshot, written under the migrations' and copies' lock, with the identity sequences
// moved past the copied IDs.
func (db *DB) CopyEndpoint() storecopy.Endpoint {
	return storecopy.Endpoint{
		DB: db.db, ReadOptions: &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
		Lock: lockWrites,
		AfterCopy: func(ctx context.Context, tx *sql.Tx) error {
			for _, table := range []string{"events", "audit_log", "run_metrics", "parallel_files", "notify_deliveries"} {
				if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('`+table+`', 'id'), COALESCE((SELECT MAX(id) FROM `+table+`), 0) + 1, false)`); err != nil {
					return fmt.Errorf("postgres: move the %s ids on: %w", table, err)
				}
			}
			return nil
		},
	}
}
