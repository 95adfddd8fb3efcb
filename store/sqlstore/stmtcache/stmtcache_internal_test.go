package stmtcache

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"

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

func TestStmtCacheBounded(t *testing.T) {
	stmts := New(openSettings(t))
	defer stmts.Close()
	queries := make([]string, maxCachedStmts+10)
	for i := range queries {
		queries[i] = "SELECT " + strconv.Itoa(i)
	}
	stmts.Prepare(t.Context(), queries)
	if n := len(*stmts.stmts.Load()); n != maxCachedStmts {
		t.Errorf("%d statements cached, want the bound %d", n, maxCachedStmts)
	}
	if !stmts.Full() {
		t.Errorf("a cache at its bound is not full")
	}
}
