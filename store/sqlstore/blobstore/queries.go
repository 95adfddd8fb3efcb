// Package blobstore holds the queries of workspaceblobstore's blobs and
// staged blocks (the Blob endpoint), for both SQL stores. Package
// sqlstore's transaction embeds Blobs, so that these are its own methods
// (store.Tx's) without its package growing.
package blobstore

import (
	"database/sql"
	"time"

	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// Blobs runs the blob queries in one transaction.
type Blobs struct{ sqlq.Tx }

// New returns the blob queries over q, a transaction whose time is now;
// readOnly refuses their writes.
func New(q sqlq.Querier, now time.Time, readOnly bool) Blobs {
	return Blobs{sqlq.Tx{Q: q, Now: now, ReadOnly: readOnly}}
}

type scanner = sqlq.Scanner

var (
	key      = sqlq.Key
	micros   = sqlq.Micros
	normTime = sqlq.NormTime
)

func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	return sqlq.Collect(rows, scan)
}
