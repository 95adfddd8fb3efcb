// Package sqlq is what the query packages beside sqlstore (notifystore,
// and others as they move) share: the transaction they run in, and how
// names and times are kept, so that each does not write them again.
package sqlq

import (
	"database/sql"
	"strings"
	"time"
)

// Querier is what the queries need of a transaction: sqlstore's, with
// its statement cache.
type Querier interface {
	Exec(query string, args ...any) (sql.Result, error)
	Query(query string, args ...any) (*sql.Rows, error)
	QueryRow(query string, args ...any) *sql.Row
}

// Key is a name as rows are found by it: names compare
// case-insensitively.
func Key(s string) string { return strings.ToLower(s) }

// Stored is a time as the stores keep it: microseconds, in UTC.
func Stored(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }
