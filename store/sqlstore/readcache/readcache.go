// Package readcache keeps a transaction's single-row reads of the rows the
// job path reads again and again (computes, workspaces, workspace limits),
// so that a store's write transaction, and the Updates a batch shares it
// among, read each once: on PostgreSQL each read it answers is a round
// trip less. See Cache for when that is correct.
package readcache

import (
	"database/sql"
	"errors"
	"reflect"
	"strings"
)

// cachedTables are the tables whose single-row reads a ReadCache keeps:
// rows that the job path reads again and again and that change rarely
// (a job's compute, read three times by a node's report that also places
// its next job; the workspace and its limits, read by each submission).
var cachedTables = []string{"computes", "workspaces", "workspace_limits"}

// Cache keeps the single-row reads of cachedTables for the rest of one
// transaction, which a store's write transaction may share among the
// Updates it runs (batch.Batcher): on PostgreSQL each read it answers is a
// round trip less, and the writers' round trips, one after another in a
// server's batches, are what bound the job path (35 statements per
// job in the write transactions, 5 of them reads of these rows already
// read in the same transaction).
//
// A row read earlier in a transaction is what the database would return
// again: in a View (one snapshot), in a SQLite write transaction (one
// writer) and in a PostgreSQL write transaction, which is SERIALIZABLE
// and so reads one snapshot, taken at its first read, while PostgreSQL
// tracks that first read against other servers' writes. A store whose
// write transactions read the latest committed rows at each statement
// (READ COMMITTED) must not share a Cache unless it locks what it read. The
// transaction's own writes to a table forget what was read of it (any
// statement that is not a SELECT and names the table), and whoever rolls
// part of a transaction back (to a savepoint) calls Reset.
//
// A nil *Cache keeps nothing. It is not safe for concurrent use: a
// transaction runs its statements one at a time.
type Cache struct {
	rows map[cacheKey]cachedRow
	// Gen is the transaction's view generation once raised, and
	// GenComputes whether computes_gen was stamped (viewgen.go): like
	// the reads, shared by the Updates of one transaction.
	Gen         int64
	GenComputes bool
}

// cacheKey names a cached read: its table and its query and arguments.
type cacheKey struct {
	table, query, args string
}

// cachedRow is the outcome of a read: the values scanned, or no row.
type cachedRow struct {
	vals  []any
	noRow bool
}

// New returns an empty cache.
func New() *Cache { return &Cache{rows: map[cacheKey]cachedRow{}} }

// Reset forgets everything kept (after a rollback to a savepoint, whose
// writes the kept rows may reflect).
func (c *Cache) Reset() {
	if c != nil {
		clear(c.rows)
		c.Gen, c.GenComputes = 0, false
	}
}

// Forget drops what is kept of the tables a write statement names (any
// statement that is not a SELECT).
func (c *Cache) Forget(query string) {
	if c == nil || len(c.rows) == 0 || isSelect(query) {
		return
	}
	for _, table := range cachedTables {
		if !strings.Contains(query, table) {
			continue
		}
		for k := range c.rows {
			if k.table == table {
				delete(c.rows, k)
			}
		}
	}
}

// isSelect reports whether query only reads (a plain SELECT).
func isSelect(query string) bool {
	q := strings.TrimLeft(query, " \t\n")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// RowScanner is what a one-row read is scanned from (*sql.Row).
type RowScanner interface{ Scan(dest ...any) error }

// QueryRow runs a one-row read of table through c: the values kept from
// the same read earlier in the transaction, or run's row, kept as
// scanned. args must be comparable as strings (the keys and names these
// reads take). A nil c runs run's row and keeps nothing.
func (c *Cache) QueryRow(table, query string, args []string, run func(args ...any) *sql.Row) RowScanner {
	anyArgs := make([]any, len(args))
	for i, a := range args {
		anyArgs[i] = a
	}
	if c == nil {
		return run(anyArgs...)
	}
	k := cacheKey{table: table, query: query, args: strings.Join(args, "\x00")}
	if r, ok := c.rows[k]; ok {
		return replay{r}
	}
	return &recorder{row: run(anyArgs...), cache: c, key: k}
}

// recorder scans a row and keeps what it scanned.
type recorder struct {
	row   *sql.Row
	cache *Cache
	key   cacheKey
}

// Scan scans the row into dest and keeps copies of the values, or that
// there was no row; other errors are not kept.
func (r *recorder) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		r.cache.rows[r.key] = cachedRow{noRow: true}
	case err == nil:
		vals := make([]any, len(dest))
		for i, d := range dest {
			vals[i] = copyValue(reflect.ValueOf(d).Elem().Interface())
		}
		r.cache.rows[r.key] = cachedRow{vals: vals}
	}
	return err
}

// replay scans a kept row.
type replay struct{ r cachedRow }

// Scan sets dest to the kept values (the same types as first scanned
// into), or returns sql.ErrNoRows.
func (p replay) Scan(dest ...any) error {
	if p.r.noRow {
		return sql.ErrNoRows
	}
	if len(dest) != len(p.r.vals) {
		return errors.New("readcache: cached row scanned into a different number of columns")
	}
	for i, d := range dest {
		dv := reflect.ValueOf(d)
		if dv.Kind() != reflect.Pointer || dv.IsNil() {
			return errors.New("readcache: cached row scanned into a non-pointer")
		}
		if p.r.vals[i] == nil {
			dv.Elem().SetZero()
			continue
		}
		v := reflect.ValueOf(copyValue(p.r.vals[i]))
		if !v.Type().AssignableTo(dv.Elem().Type()) {
			return errors.New("readcache: cached row scanned into a different type")
		}
		dv.Elem().Set(v)
	}
	return nil
}

// copyValue returns v, with a byte slice copied so that no reader
// shares (and may change) a kept value.
func copyValue(v any) any {
	if b, ok := v.([]byte); ok && b != nil {
		return append([]byte(nil), b...)
	}
	return v
}
