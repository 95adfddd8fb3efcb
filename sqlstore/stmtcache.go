package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"sync/atomic"
)

// maxCachedStmts bounds a StmtCache. Query texts never hold values (they
// take $n parameters), so the texts in use are few: the constant queries and
// the variants of the list queries by which filters are set.
const maxCachedStmts = 512

// StmtCache keeps prepared statements of one connection pool by query text,
// so that the queries run many times a second are parsed once per
// connection instead of at every call (parsing is about a quarter of the
// cost of a small write transaction).
//
// Statements cannot be prepared inside a transaction: sql.DB.Prepare takes a
// connection of the pool, and the writer pool has only the one the
// transaction holds. So a transaction runs the queries it finds no statement
// for as plain queries and notes them, and run prepares them once the
// transaction has ended. A cached statement is bound to a transaction with
// sql.Tx.StmtContext, which reuses it on the transaction's connection, or
// prepares it there the first time.
type StmtCache struct {
	pool  *sql.DB
	stmts atomic.Pointer[map[string]*sql.Stmt] // replaced, never changed

	mu     sync.Mutex // serialises prepare and close
	closed bool
}

func NewStmtCache(pool *sql.DB) *StmtCache {
	c := &StmtCache{pool: pool}
	c.stmts.Store(&map[string]*sql.Stmt{})
	return c
}

// get returns the statement of query, or nil.
func (c *StmtCache) get(query string) *sql.Stmt { return (*c.stmts.Load())[query] }

// full reports whether the cache takes no more statements.
func (c *StmtCache) full() bool { return len(*c.stmts.Load()) >= maxCachedStmts }

// prepare prepares and caches those of queries that are not cached. It must
// not be called while the caller holds a connection of the pool. A query
// that fails to prepare is left out: it runs unprepared, and the next
// transaction that runs it tries again.
func (c *StmtCache) prepare(ctx context.Context, queries []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	old := *c.stmts.Load()
	next := make(map[string]*sql.Stmt, len(old)+len(queries))
	for q, s := range old {
		next[q] = s
	}
	for _, q := range queries {
		if _, ok := next[q]; ok || len(next) >= maxCachedStmts {
			continue
		}
		s, err := c.pool.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		next[q] = s
	}
	c.stmts.Store(&next)
}

// close closes the cached statements; later prepares do nothing.
func (c *StmtCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var first error
	for _, s := range *c.stmts.Load() {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.stmts.Store(&map[string]*sql.Stmt{})
	return first
}

// stmt returns the cached statement of query bound to t, or nil after
// noting query for preparing once t has ended.
func (t *tx) stmt(query string) *sql.Stmt {
	if s := t.stmts.get(query); s != nil {
		return t.tx.StmtContext(t.ctx, s)
	}
	if !t.stmts.full() && !slices.Contains(t.unprepared, query) {
		t.unprepared = append(t.unprepared, query)
	}
	return nil
}

func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	if s := t.stmt(query); s != nil {
		return s.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

func (t *tx) query(query string, args ...any) (*sql.Rows, error) {
	if s := t.stmt(query); s != nil {
		return s.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, query, args...)
}

func (t *tx) queryRow(query string, args ...any) *sql.Row {
	if s := t.stmt(query); s != nil {
		return s.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, query, args...)
}
