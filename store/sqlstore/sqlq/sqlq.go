// Package sqlq is what the query packages beside sqlstore (notifystore,
// and others as they move) share: the transaction they run in, and how
// names and times are kept, so that each does not write them again.
package sqlq

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
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

// NodeComputeKey is the stored compute_key of a node: the lower-cased
// workspace and compute names.
func NodeComputeKey(workspace, compute string) string { return Key(workspace) + "/" + Key(compute) }

// Stored is a time as the stores keep it: microseconds, in UTC.
func Stored(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// ErrReadOnly is returned by writes attempted in a View transaction.
var ErrReadOnly = errors.New("store: write in a read-only transaction")

// Scanner is a *sql.Row or *sql.Rows.
type Scanner interface{ Scan(...any) error }

// Micros converts a time to what is stored: unix microseconds.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros converts a stored time back, in UTC.
func FromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// BoolInt converts a bool to its stored form.
func BoolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// NormTime sets *t to its stored form.
func NormTime(t *time.Time) { *t = Stored(*t) }

// NormTimePtr points *p at the stored form of **p when that differs. A nil
// *p stays nil.
func NormTimePtr(p **time.Time) {
	if *p == nil {
		return
	}
	if v := Stored(**p); v != **p {
		*p = &v
	}
}

// Collect reads all rows with scan.
func Collect[T any](rows *sql.Rows, scan func(Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Affected returns the rows a statement changed.
func Affected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// DeleteOne runs a DELETE that must remove exactly one row. what names
// the row in messages ("compute default/cpu"); missing is the ENOTFOUND
// message.
func DeleteOne(q Querier, what, missing, query string, args ...any) error {
	res, err := q.Exec(query, args...)
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", what, err)
	}
	n, err := Affected(res)
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", what, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "%s", missing)
	}
	return nil
}

// Tx is what a query package's methods run in: the transaction, its
// time, and whether it may write.
type Tx struct {
	Q        Querier
	Now      time.Time
	ReadOnly bool
}

// Writable returns an error naming op when the transaction is read-only.
func (t *Tx) Writable(op string) error {
	if t.ReadOnly {
		return fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	return nil
}

// ScanJoined scans one row whose columns are those of several scans in
// turn (a join's, each scan reading its own table's columns with one Scan
// of its own): the Scan each is handed runs the next, the last scans the
// row into all their destinations, and each then decodes its own, as it
// would from a row of its own.
func ScanJoined(row Scanner, scans ...func(Scanner) error) error {
	var dests []any
	var run func(i int) error
	run = func(i int) error {
		if i == len(scans) {
			return row.Scan(dests...)
		}
		return scans[i](scanFunc(func(d ...any) error {
			dests = append(dests, d...)
			return run(i + 1)
		}))
	}
	return run(0)
}

// Into is scan as one of ScanJoined's scans, keeping what it reads in v.
func Into[T any](v *T, scan func(Scanner) (T, error)) func(Scanner) error {
	return func(sc Scanner) (err error) {
		*v, err = scan(sc)
		return err
	}
}

// Columns is one of ScanJoined's scans that reads columns into dest as
// they are.
func Columns(dest ...any) func(Scanner) error {
	return func(sc Scanner) error { return sc.Scan(dest...) }
}

// scanFunc is a function as a Scanner.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// Qualify prefixes each name of a column list ("a, b") with a table's
// alias, for a join.
func Qualify(alias, columns string) string {
	names := strings.Split(columns, ", ")
	for i, c := range names {
		names[i] = alias + "." + c
	}
	return strings.Join(names, ", ")
}

// NextSeq advances counter and returns its new value (1 the first time):
// the creation orders of jobs and asset versions, kept in the sequences
// table so that both stores number them the same way.
func NextSeq(q Querier, counter string) (int64, error) {
	var v int64
	err := q.QueryRow(`INSERT INTO sequences (name, value) VALUES ($1, 1)
		ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1
		RETURNING value`, counter).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: next value of counter %q: %w", counter, err)
	}
	return v, nil
}
