// Package identstore holds the queries of who may do what, for both SQL
// stores: identities, users, role definitions and assignments, API
// tokens, service principals, the workload signing keys and the audit
// log. Package sqlstore's transaction embeds Queries, so that these are
// its own methods (store.Tx's) without its package growing.
package identstore

import (
	"database/sql"
	"time"

	"github.com/shoal-ml/shoal/store/sqlstore/appendlog"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// Queries runs the identity queries in one transaction.
type Queries struct {
	sqlq.Tx
	// Log, when set, keeps the audit records appended until the batch
	// writes them, in one statement, before it commits (package
	// appendlog); nil writes each at once.
	Log *appendlog.Log
}

// New returns the queries over q, a transaction whose time is now;
// readOnly refuses their writes.
func New(q sqlq.Querier, now time.Time, readOnly bool) Queries {
	return Queries{Tx: sqlq.Tx{Q: q, Now: now, ReadOnly: readOnly}}
}

// deleteOne runs a DELETE that must remove exactly one row (sqlq.DeleteOne).
func (t *Queries) deleteOne(what, missing, query string, args ...any) error {
	if err := t.Writable("delete " + what); err != nil {
		return err
	}
	return sqlq.DeleteOne(t.Q, what, missing, query, args...)
}

type scanner = sqlq.Scanner

var (
	key         = sqlq.Key
	stored      = sqlq.Stored
	micros      = sqlq.Micros
	fromMicros  = sqlq.FromMicros
	boolInt     = sqlq.BoolInt
	affected    = sqlq.Affected
	normTime    = sqlq.NormTime
	normTimePtr = sqlq.NormTimePtr
)

func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	return sqlq.Collect(rows, scan)
}
