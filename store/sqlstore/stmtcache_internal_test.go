package sqlstore

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/stmtcache"
	_ "modernc.org/sqlite" // a real database to prepare statements in
)

// openSettings opens a SQLite file with the settings table.
func openSettings(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestStmtCache(t *testing.T) {
	db := openSettings(t)
	stmts := stmtcache.New(db)
	run := func(readOnly bool, fn func(store.Tx) error) error {
		return Run(t.Context(), db, stmts, &sql.TxOptions{ReadOnly: readOnly}, time.Now(), nil, fn)
	}
	const put = `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	const get = `SELECT value FROM settings WHERE key = $1`
	for i, v := range []string{"a", "b", "c"} {
		if err := run(false, func(tx store.Tx) error { return tx.PutSetting("k", v) }); err != nil {
			t.Fatal(err)
		}
		// The first transaction runs the query unprepared and prepares it
		// once it has ended.
		if stmts.Get(put) == nil {
			t.Fatalf("after write %d: no prepared statement for PutSetting", i)
		}
		err := run(true, func(tx store.Tx) error {
			got, err := tx.GetSetting("k")
			if err == nil && got != v {
				t.Errorf("read %d = %q, want %q: a reused statement reads an old snapshot", i, got, v)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if stmts.Get(get) == nil {
			t.Fatalf("after read %d: no prepared statement for GetSetting", i)
		}
	}

	// A query that does not prepare is not cached, and the transaction's
	// error is the query's.
	const bad = `SELECT nope FROM nowhere`
	err := run(false, func(stx store.Tx) error {
		_, err := stx.(*tx).exec(bad)
		return err
	})
	if err == nil {
		t.Errorf("a bad query succeeded")
	}
	if stmts.Get(bad) != nil {
		t.Errorf("a bad query was cached")
	}
	if err := stmts.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := stmts.Len(); n != 0 {
		t.Errorf("%d statements cached after Close", n)
	}
}
