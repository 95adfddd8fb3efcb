// Package assetstore holds the queries of what a workspace registers
// beside its compute, for both SQL stores: versioned assets
// (environments, components, data assets, models, codes), registry
// logins and datastores. Package sqlstore's transaction embeds Assets,
// so that these are its own methods (store.Tx's) without its package
// growing.
package assetstore

import (
	"database/sql"
	"time"

	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// Assets runs the asset queries in one transaction.
type Assets struct{ sqlq.Tx }

// New returns the queries over q, a transaction whose time is now;
// readOnly refuses their writes.
func New(q sqlq.Querier, now time.Time, readOnly bool) Assets {
	return Assets{sqlq.Tx{Q: q, Now: now, ReadOnly: readOnly}}
}

type scanner = sqlq.Scanner

var (
	key      = sqlq.Key
	boolInt  = sqlq.BoolInt
	affected = sqlq.Affected
	normTime = sqlq.NormTime
)

func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	return sqlq.Collect(rows, scan)
}
