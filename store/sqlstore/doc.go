package sqlstore

import (
	"database/sql"
	"time"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// normTime sets *t to its stored form.
func normTime(t *time.Time) { *t = stored(*t) }

// normTimePtr points *p at the stored form of **p when that differs. A nil
// *p stays nil.
func normTimePtr(p **time.Time) {
	if *p == nil {
		return
	}
	if v := stored(**p); v != **p {
		*p = &v
	}
}

// collect reads all rows with scan.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
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
