package sqlitetest_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlite/sqlitetest"
)

// Two copies are two stores: each opens migrated, and what one stores the
// other does not see.
func TestCopiesAreMigratedAndApart(t *testing.T) {
	ctx := context.Background()
	open := func() *sqlite.DB {
		db, err := sqlite.Open(ctx, sqlite.Config{Path: sqlitetest.Path(t, t.TempDir(), "s.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	if err := a.Update(ctx, func(tx store.Tx) error {
		return tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local", CreatedOn: tx.Now()})
	}); err != nil {
		t.Fatalf("a store from the template takes a write: %v", err)
	}
	for name, db := range map[string]*sqlite.DB{"a": a, "b": b} {
		var n int
		if err := db.View(ctx, func(tx store.Tx) error {
			l, err := tx.ListWorkspaces()
			n = len(l)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"a": 1, "b": 0}[name]; n != want {
			t.Errorf("store %s has %d workspaces, want %d", name, n, want)
		}
	}
}
