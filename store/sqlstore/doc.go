package sqlstore

import (
	"database/sql"

	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner = sqlq.Scanner

// The stored forms of times and the reading of rows are sqlq's, which
// the query packages beside this one share.
var (
	normTime    = sqlq.NormTime
	normTimePtr = sqlq.NormTimePtr
)

// collect reads all rows with scan.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	return sqlq.Collect(rows, scan)
}
