package scaling

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/sqlite"
	"github.com/shoal-ml/shoal/storetest"
)

// openTestStore opens a SQLite store in a temp dir on a test clock, with
// the workspace "ws" in it, closed when the test ends.
func openTestStore(t *testing.T) (*sqlite.DB, *storetest.Clock) {
	t.Helper()
	ctx := context.Background()
	clock := storetest.NewClock(storetest.Start)
	db, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(ctx, func(tx shoal.Tx) error {
		return tx.InsertWorkspace(&shoal.Workspace{Name: "ws", Location: "local", CreatedOn: tx.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	return db, clock
}
