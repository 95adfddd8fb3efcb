package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
)

// The lease: one holder at a time, renewals keep the term, an expired
// lease passes to another in a new term; a write under an old term's
// fence is refused and writes nothing, under the current one it lands.
func TestLeaseAndFence(t *testing.T) {
	pg := testpg.Start(t)
	db, err := postgres.Open(t.Context(), postgres.Config{URL: pg.NewDatabase(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	const ttl = 500 * time.Millisecond
	a, err := db.Acquire(ctx, "controllers", "a", ttl)
	if err != nil || !a.Held || a.Token != 1 {
		t.Fatalf("a: %+v %v", a, err)
	}
	if b, err := db.Acquire(ctx, "controllers", "b", ttl); err != nil || b.Held || b.Holder != "a" {
		t.Fatalf("b while a holds: %+v %v", b, err)
	}
	if again, err := db.Acquire(ctx, "controllers", "a", ttl); err != nil || !again.Held || again.Token != 1 {
		t.Fatalf("a renews: %+v %v", again, err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	b, err := db.Acquire(ctx, "controllers", "b", ttl)
	if err != nil || !b.Held || b.Token != 2 {
		t.Fatalf("b after a's lease expired: %+v %v", b, err)
	}
	old := core.WithFence(ctx, core.Fence{Name: "controllers", Holder: "a", Token: 1})
	err = db.Update(old, func(tx store.Tx) error { return tx.PutSetting("decision", "stale") })
	if core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("a write in a's old term: %v; want ECONFLICT", err)
	}
	cur := core.WithFence(ctx, core.Fence{Name: "controllers", Holder: "b", Token: 2})
	if err := db.Update(cur, func(tx store.Tx) error { return tx.PutSetting("decision", "fresh") }); err != nil {
		t.Fatalf("a write in b's term: %v", err)
	}
	var got string
	if err := db.View(ctx, func(tx store.Tx) error { got, err = tx.GetSetting("decision"); return err }); err != nil || got != "fresh" {
		t.Fatalf("decision = %q, %v", got, err)
	}
	// b resigns: a takes it at once, in term 3.
	if err := db.Resign(ctx, "controllers", "b"); err != nil {
		t.Fatal(err)
	}
	if a, err := db.Acquire(ctx, "controllers", "a", ttl); err != nil || !a.Held || a.Token != 3 {
		t.Fatalf("a after b resigned: %+v %v", a, err)
	}
}

// A change committed through one store wakes a listener on another (two
// servers on one database); a change rolled back does not, nor does a
// change through the listener's own store: its server woke its own
// controllers as it made it, where a pass could find something to do.
func TestListenChanges(t *testing.T) {
	pg := testpg.Start(t)
	url := pg.NewDatabase(t)
	a, err := postgres.Open(t.Context(), postgres.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(t.Context(), postgres.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	woken, self := make(chan struct{}, 10), make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go b.ListenChanges(ctx, func() { woken <- struct{}{} })
	go a.ListenChanges(ctx, func() { self <- struct{}{} })
	time.Sleep(200 * time.Millisecond) // LISTEN is under way
	errRollback := errors.New("rolled back")
	if err := a.Update(t.Context(), func(tx store.Tx) error { tx.PutSetting("k", "v"); return errRollback }); err != errRollback {
		t.Fatal(err)
	}
	select {
	case <-woken:
		t.Fatal("woken by a change rolled back")
	case <-time.After(300 * time.Millisecond):
	}
	if err := a.Update(t.Context(), func(tx store.Tx) error { return tx.PutSetting("k", "v") }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	case <-time.After(5 * time.Second):
		t.Fatal("a committed change did not wake the other store's listener")
	}
	// The notification reached b: a's listener, on the same channel, had
	// it as soon, and skipped it.
	select {
	case <-self:
		t.Fatal("a store's own committed change woke its own listener")
	case <-time.After(300 * time.Millisecond):
	}
	// And a's listener still hears b's changes.
	if err := b.Update(t.Context(), func(tx store.Tx) error { return tx.PutSetting("k", "w") }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-self:
	case <-time.After(5 * time.Second):
		t.Fatal("a committed change through b did not wake a's listener")
	}
}
