// Package stmtcache keeps a connection pool's prepared statements by
// query text, for the SQL stores' transactions (sqlstore), apart from the
// queries themselves.
package stmtcache

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// maxCachedStmts bounds a Cache. Query texts never hold values (they
// take $n parameters), so the texts in use are few: the constant queries and
// the variants of the list queries by which filters are set.
const maxCachedStmts = 512

// Cache keeps prepared statements of one connection pool by query text,
// so that the queries run many times a second are parsed once per
// connection instead of at every call (parsing is about a quarter of the
// cost of a small write transaction).
//
// Statements cannot be prepared inside a transaction: sql.DB.Prepare takes a
// connection of the pool, and the writer pool has only the one the
// transaction holds. So a transaction runs the queries it finds no statement
// for as plain queries and notes them, and sqlstore.Run prepares them once the
// transaction has ended. A cached statement is bound to a transaction with
// sql.Tx.StmtContext, which reuses it on the transaction's connection, or
// prepares it there the first time.
//
// The SQLite store uses it. The PostgreSQL store does not: its pool's
// database/sql connections are wrappers that live one transaction each,
// so a statement bound to one would be prepared and deallocated in every
// transaction; pgx keeps each connection's statements itself.
type Cache struct {
	pool  *sql.DB
	stmts atomic.Pointer[map[string]*sql.Stmt] // replaced, never changed

	mu     sync.Mutex // serialises prepare and close
	closed bool
}

// New is an empty cache of pool's statements.
func New(pool *sql.DB) *Cache {
	c := &Cache{pool: pool}
	c.stmts.Store(&map[string]*sql.Stmt{})
	return c
}

// Get returns the statement of query, or nil.
func (c *Cache) Get(query string) *sql.Stmt { return (*c.stmts.Load())[query] }

// Full reports whether the cache takes no more statements.
func (c *Cache) Full() bool { return len(*c.stmts.Load()) >= maxCachedStmts }

// Prepare prepares and caches those of queries that are not cached. It must
// not be called while the caller holds a connection of the pool. A query
// that fails to prepare is left out: it runs unprepared, and the next
// transaction that runs it tries again.
func (c *Cache) Prepare(ctx context.Context, queries []string) {
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

// Close closes the cached statements; later prepares do nothing.
func (c *Cache) Close() error {
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

// Len is how many statements the cache holds.
func (c *Cache) Len() int { return len(*c.stmts.Load()) }
