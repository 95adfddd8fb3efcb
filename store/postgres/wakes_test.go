package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store/postgres"
)

// openWakes opens a store on url and runs its Wakes until the test ends.
func openWakes(t *testing.T, url string) (*postgres.DB, *postgres.Wakes) {
	t.Helper()
	db, err := postgres.Open(t.Context(), postgres.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	w := db.NewWakes()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; db.Close() })
	return db, w
}

// wokenBy waits for ch to close, calling poke every 50 ms meanwhile (a
// listener may not have begun to listen yet); it fails after 20 s.
func wokenBy(t *testing.T, what string, ch <-chan struct{}, poke func()) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		poke()
		select {
		case <-ch:
			return
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not woken in 20 s", what)
		}
	}
}

// Two servers on one database: a wake on one wakes the other's waiter of
// that node, and no other node's; a server on another database hears
// nothing; when the listening connection is lost, every waiter is woken
// (what it missed is unknown) and wakes flow again once it reconnects.
func TestWakesAcrossServers(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	_, a := openWakes(t, url)
	_, b := openWakes(t, url)
	_, other := openWakes(t, pg.NewDatabase(t))

	n1, n2, otherN1 := b.Wait("n1"), b.Wait("n2"), other.Wait("n1")
	// A parked sync listens with Notify instead of Wait.
	noted := make(chan struct{})
	b.Notify("n1", func() { close(noted) })
	wokenBy(t, "b's waiter of n1 by a's wake", n1, func() { a.Wake("n1") })
	wokenBy(t, "b's note of n1 by a's wake", noted, func() {})
	select {
	case <-n2:
		t.Error("a wake of n1 woke n2")
	default:
	}
	// The other database's server, woken by its own wake of n9 after
	// a's wakes were sent, did not hear them.
	wokenBy(t, "the other database's own wake", other.Wait("n9"), func() { other.Wake("n9") })
	select {
	case <-otherN1:
		t.Error("a wake on another database woke its waiter")
	default:
	}

	// Cut b's listening connection: b wakes all its waiters, reconnects,
	// and hears a's wakes again.
	lost := b.Wait("n3")
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`); err != nil {
		t.Fatal(err)
	}
	wokenBy(t, "b's waiters after its listener was cut", lost, func() {})
	wokenBy(t, "b's waiter of n2 after b reconnected", n2, func() { a.Wake("n2") })
}
