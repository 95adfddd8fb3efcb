package readcache

import (
	"database/sql"
	"errors"
	"testing"
)

// A write statement that names a cached table forgets that table's rows,
// and only those; reads and writes of other tables keep them.
func TestReadCacheForgets(t *testing.T) {
	c := New()
	fill := func() {
		c.rows[cacheKey{table: "computes", args: "a"}] = cachedRow{noRow: true}
		c.rows[cacheKey{table: "workspaces", args: "a"}] = cachedRow{noRow: true}
	}
	has := func(table string) bool {
		for k := range c.rows {
			if k.table == table {
				return true
			}
		}
		return false
	}
	fill()
	for _, q := range []string{
		"SELECT x FROM computes WHERE a = $1",
		"  select * from workspaces",
		"INSERT INTO events (time) VALUES ($1)",
		"UPDATE jobs SET status = $1",
	} {
		c.Forget(q)
		if !has("computes") || !has("workspaces") {
			t.Fatalf("%q forgot kept rows", q)
		}
	}
	c.Forget("\n\t\tUPDATE computes SET workspace = $3 WHERE workspace_key = $1")
	if has("computes") || !has("workspaces") {
		t.Fatalf("an UPDATE of computes: computes kept %v, workspaces kept %v", has("computes"), has("workspaces"))
	}
	c.Forget("DELETE FROM workspaces WHERE name_key = $1")
	if has("workspaces") {
		t.Fatal("a DELETE of workspaces kept its rows")
	}
	fill()
	c.Reset()
	if len(c.rows) != 0 {
		t.Fatal("Reset kept rows")
	}
	var nilCache *Cache
	nilCache.Forget("DELETE FROM computes")
	nilCache.Reset()
}

// A kept row scans into the types it was first scanned into, with its
// byte slices copied; no row stays no row; other types are refused.
func TestReadCacheReplay(t *testing.T) {
	p := replay{cachedRow{vals: []any{"name", int64(7), []byte("doc"), nil}}}
	var (
		s   string
		n   int64
		b   []byte
		ptr *string
	)
	if err := p.Scan(&s, &n, &b, &ptr); err != nil {
		t.Fatal(err)
	}
	if s != "name" || n != 7 || string(b) != "doc" || ptr != nil {
		t.Fatalf("replayed %q %d %q %v", s, n, b, ptr)
	}
	b[0] = 'X'
	var b2 []byte
	if err := p.Scan(&s, &n, &b2, &ptr); err != nil || string(b2) != "doc" {
		t.Fatalf("a reader's change to a replayed byte slice reached the kept row: %q, %v", b2, err)
	}
	var wrong int32
	if err := p.Scan(&s, &wrong, &b, &ptr); err == nil {
		t.Fatal("a replay into another type succeeded")
	}
	if err := p.Scan(&s); err == nil {
		t.Fatal("a replay into fewer columns succeeded")
	}
	if err := (replay{cachedRow{noRow: true}}).Scan(&s); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("no row replayed as %v", err)
	}
}
