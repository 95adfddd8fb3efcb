package sqlstore

import (
	"database/sql"

	"github.com/shoal-ml/shoal/store/sqlstore/readcache"
)

// ReadCache keeps a transaction's single-row reads of computes, workspaces
// and workspace limits (package readcache), shared by the Updates a
// store's batch runs in one transaction.
type ReadCache = readcache.Cache

// NewReadCache returns an empty ReadCache.
func NewReadCache() *ReadCache { return readcache.New() }

// cachedQueryRow runs a one-row read of table through t's ReadCache.
func (t *tx) cachedQueryRow(table, query string, args ...string) readcache.RowScanner {
	return t.cache.QueryRow(table, query, args, func(a ...any) *sql.Row { return t.queryRow(query, a...) })
}
