package sqlite

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/shoal-ml/shoal"
)

func TestStmtCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shoal.db")
	db, err := Open(t.Context(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	const put = `INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	const get = `SELECT value FROM settings WHERE key = $1`
	for i, v := range []string{"a", "b", "c"} {
		if err := db.Update(t.Context(), func(tx shoal.Tx) error { return tx.PutSetting("k", v) }); err != nil {
			t.Fatal(err)
		}
		// The first transaction runs the query unprepared and prepares it
		// once it has ended.
		if db.rwStmts.get(put) == nil {
			t.Fatalf("after write %d: the writer has no prepared statement for PutSetting", i)
		}
		err := db.View(t.Context(), func(tx shoal.Tx) error {
			got, err := tx.GetSetting("k")
			if err == nil && got != v {
				t.Errorf("read %d = %q, want %q: a reused statement reads an old snapshot", i, got, v)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if db.roStmts.get(get) == nil {
			t.Fatalf("after read %d: the readers have no prepared statement for GetSetting", i)
		}
	}
	if db.roStmts.get(put) != nil {
		t.Errorf("the readers prepared a write")
	}

	// A query that does not prepare is not cached, and the transaction's
	// error is the query's.
	const bad = `SELECT nope FROM nowhere`
	err = db.Update(t.Context(), func(stx shoal.Tx) error {
		_, err := stx.(*tx).exec(bad)
		return err
	})
	if err == nil {
		t.Errorf("a bad query succeeded")
	}
	if db.rwStmts.get(bad) != nil {
		t.Errorf("a bad query was cached")
	}

	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := len(*db.rwStmts.stmts.Load()) + len(*db.roStmts.stmts.Load()); n != 0 {
		t.Errorf("%d statements cached after Close", n)
	}
	// SQLite checkpoints and removes the WAL when the last connection
	// closes, which it cannot do while a statement is left unfinalized.
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("the WAL file is left after Close (%v): statements were not finalized", err)
	}
}

func TestStmtCacheBounded(t *testing.T) {
	db, err := Open(t.Context(), Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queries := make([]string, maxCachedStmts+10)
	for i := range queries {
		queries[i] = "SELECT " + strconv.Itoa(i)
	}
	db.roStmts.prepare(t.Context(), queries)
	if n := len(*db.roStmts.stmts.Load()); n != maxCachedStmts {
		t.Errorf("%d statements cached, want the bound %d", n, maxCachedStmts)
	}
	if !db.roStmts.full() {
		t.Errorf("a cache at its bound is not full")
	}
}
