package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
)

// A statement is prepared once per connection, not once per transaction:
// on a pool of one connection, one prepared statement of a read runs it
// in every transaction, Views and Updates alike. (When database/sql's
// statements were cached, each transaction prepared them on
// database/sql's fresh wrapper of the connection and deallocated them as
// it ended: two round trips more per statement, and, PostgreSQL seeing
// each run once, a plan made at every execution. The kept statement then
// ran once.)
func TestStatementsPreparedOncePerConnection(t *testing.T) {
	pg := testpg.Start(t)
	db, err := Open(t.Context(), Config{URL: pg.NewDatabase(t), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const query = `SELECT value FROM settings WHERE key = $1`
	// How many statements of the read the connection holds, when the
	// first was prepared, and how many times they have run.
	prepared := func() (n int, at time.Time, runs int) {
		t.Helper()
		err := db.db.QueryRowContext(t.Context(), `SELECT COUNT(*), COALESCE(MAX(prepare_time), 'epoch'), COALESCE(SUM(generic_plans + custom_plans), 0)
			FROM pg_prepared_statements WHERE statement = $1`, query).Scan(&n, &at, &runs)
		if err != nil {
			t.Fatal(err)
		}
		return n, at, runs
	}
	if err := db.Update(t.Context(), func(tx store.Tx) error { return tx.PutSetting("k", "v") }); err != nil {
		t.Fatal(err)
	}
	read := func() {
		t.Helper()
		for range 2 {
			if err := db.View(t.Context(), func(tx store.Tx) error {
				_, err := tx.GetSetting("k")
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if err := db.Update(t.Context(), func(tx store.Tx) error {
				_, err := tx.GetSetting("k")
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	read()
	n, first, _ := prepared()
	if n != 1 {
		t.Fatalf("after the transactions that read it, the read is prepared %d times on the connection; want once, kept", n)
	}
	read()
	if n, at, runs := prepared(); n != 1 || !at.Equal(first) || runs != 8 {
		t.Fatalf("after more transactions: prepared %d times, at %v (first at %v), run %d times; want one statement, not prepared again, that ran the 8 reads", n, at, first, runs)
	}
}

// The operator's way to plan every execution (docs/operations/stores.md):
// plan_cache_mode in the URL is the session's.
func TestPlanCacheModeFromTheURL(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	if strings.Contains(url, "?") {
		url += "&plan_cache_mode=force_custom_plan"
	} else {
		url += "?plan_cache_mode=force_custom_plan"
	}
	db, err := Open(t.Context(), Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.db.QueryRowContext(t.Context(), `SHOW plan_cache_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "force_custom_plan" {
		t.Fatalf("plan_cache_mode = %q; want the URL's force_custom_plan", mode)
	}
}
