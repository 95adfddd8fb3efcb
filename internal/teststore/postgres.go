package teststore

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/storetest"
)

// Servers opens n stores over one new PostgreSQL database (a private
// server started for the test), as n Shoal servers sharing it, on one
// test clock, with the workspace "ws" in it: for failover tests.
func Servers(t *testing.T, n int) ([]*postgres.DB, *storetest.Clock) {
	t.Helper()
	url := testpg.Start(t).NewDatabase(t)
	clock := storetest.NewClock(storetest.Start)
	dbs := make([]*postgres.DB, n)
	for i := range dbs {
		db, err := postgres.Open(t.Context(), postgres.Config{URL: url, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	if err := dbs[0].Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local", CreatedOn: tx.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	return dbs, clock
}

// Lead makes holder the controllers' leader through db and returns a
// context carrying its fence, as a leading server's controllers run
// under: their writes are refused once another holder leads.
func Lead(t *testing.T, db *postgres.DB, holder string) (context.Context, postgres.Term) {
	t.Helper()
	term, err := db.Acquire(t.Context(), "controllers", holder, time.Hour)
	if err != nil || !term.Held {
		t.Fatalf("%s taking the lead: %+v %v", holder, term, err)
	}
	return core.WithFence(t.Context(), core.Fence{Name: "controllers", Holder: holder, Token: term.Token}), term
}
