package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the test's own connection

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testpg"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// Two servers' writes of different rows run side by side: one server's
// write held open does not hold up the other's. Every Update used to
// take one store-wide lock, and the second server's write waited for
// the first's to commit.
func TestServersWriteDifferentRowsAtOnce(t *testing.T) {
	t.Parallel()
	url := testpg.Start(t).NewDatabase(t)
	a, b := openOn(t, url), openOn(t, url)
	ctx := t.Context()

	let := make(chan struct{})
	running := make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		aDone <- a.Update(ctx, func(tx store.Tx) error {
			if err := tx.PutSetting("a", "1"); err != nil {
				return err
			}
			close(running)
			<-let
			return nil
		})
	}()
	<-running
	// Well under WriteIdleTimeout, after which the database would end
	// a's idle transaction and release whatever it holds.
	bDone := make(chan error, 1)
	go func() { bDone <- b.Update(ctx, func(tx store.Tx) error { return tx.PutSetting("b", "1") }) }()
	select {
	case err := <-bDone:
		if err != nil {
			t.Fatalf("the second server's write: %v", err)
		}
	case <-time.After(5 * time.Second):
		close(let)
		<-aDone
		<-bDone
		t.Fatal("the second server's write of another row waited for the first server's write to end: the servers' writes are serialised store-wide")
	}
	close(let)
	if err := <-aDone; err != nil {
		t.Fatalf("the first server's write: %v", err)
	}
	for _, k := range []string{"a", "b"} {
		if err := b.View(ctx, func(tx store.Tx) error { _, err := tx.GetSetting(k); return err }); err != nil {
			t.Errorf("setting %s after both writes: %v", k, err)
		}
	}
}

// Two servers that read a counter and write it plus one at the same
// time both count: PostgreSQL fails one of the writes (a serialization
// failure), and that write runs again, reading what the other committed.
// Without SERIALIZABLE (READ COMMITTED with no lock) both would write 1.
func TestConcurrentReadModifyWritesRunAgainAndLoseNothing(t *testing.T) {
	t.Parallel()
	url := testpg.Start(t).NewDatabase(t)
	a, b := openOn(t, url), openOn(t, url)
	ctx := t.Context()
	if err := a.Update(ctx, func(tx store.Tx) error { return tx.PutSetting("counter", "0") }); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// Both first runs read before either writes.
	var read sync.WaitGroup
	read.Add(2)
	var runs, alone atomic.Int64
	increment := func(first *sync.Once) func(tx store.Tx) error {
		ran := false
		return func(tx store.Tx) error {
			runs.Add(1)
			if ran {
				// A run again runs alone: it holds the write gate
				// exclusive, which every write takes shared.
				var n int
				if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
					WHERE c.relname = 'write_gate' AND l.mode = 'ExclusiveLock' AND l.granted`).Scan(&n); err != nil {
					return err
				}
				alone.Add(int64(n))
			}
			ran = true
			v, err := tx.GetSetting("counter")
			if err != nil {
				return err
			}
			first.Do(func() {
				read.Done()
				read.Wait()
			})
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			return tx.PutSetting("counter", strconv.Itoa(n+1))
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, db := range []interface {
		Update(context.Context, func(store.Tx) error) error
	}{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Update(ctx, increment(new(sync.Once)))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("server %d's increment: %v", i, err)
		}
	}
	var got string
	if err := a.View(ctx, func(tx store.Tx) error { var err error; got, err = tx.GetSetting("counter"); return err }); err != nil {
		t.Fatal(err)
	}
	if got != "2" {
		t.Errorf("counter = %s after two increments read at once; want 2 (an increment lost)", got)
	}
	if r := runs.Load(); r != 3 {
		t.Errorf("the increments ran %d times; want 3 (the one that gave way runs again, once: alone)", r)
	}
	if alone.Load() != 1 {
		t.Errorf("the run again held the write gate alone %d times; want 1", alone.Load())
	}
}

// The event log's IDs are committed in the order they are drawn, though
// the servers' writes run side by side: a server whose events were given
// IDs after another's, still uncommitted, waits for that one to commit
// before it draws them. Otherwise a reader following the log by ID (the
// notifier: core.EventFilter.AfterID) could see the later IDs, move past
// them, and never see the earlier ones committed after.
func TestEventLogIDsCommitInTheOrderTheyAreDrawn(t *testing.T) {
	t.Parallel()
	url := testpg.Start(t).NewDatabase(t)
	a, b := openOn(t, url), openOn(t, url)
	ctx := t.Context()
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// A trigger holds a's transaction after its events are inserted
	// (their IDs drawn) and before it commits, for as long as the test
	// holds advisory lock 42 on a connection of its own.
	const holdKey = 42
	for _, q := range []string{
		`CREATE FUNCTION hold_events() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_advisory_xact_lock_shared(42); RETURN NULL; END $$`,
		`CREATE TRIGGER hold_events AFTER INSERT ON events FOR EACH ROW WHEN (NEW.workspace = 'held') EXECUTE FUNCTION hold_events()`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	holder, err := raw.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, holdKey); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, holdKey); err != nil {
				t.Error(err)
			}
		}
	}
	defer release()

	appendEvent := func(ws string, e **core.Event) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			*e = &core.Event{Time: time.Now(), Workspace: ws, ResourceType: "test", ResourceName: ws, Kind: "Test"}
			return tx.AppendEvent(*e)
		}
	}
	var ea, eb *core.Event
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() { aDone <- a.Update(ctx, appendEvent("held", &ea)) }()
	waitFor(t, "the first server's events inserted and held before its commit", func() bool {
		var n int
		err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, holdKey).Scan(&n)
		return err == nil && n > 0
	})
	go func() { bDone <- b.Update(ctx, appendEvent("free", &eb)) }()
	// b must wait for the event log's lock, which a holds to its commit.
	deadline := time.Now().Add(10 * time.Second)
	for waiting := false; !waiting; {
		select {
		case err := <-bDone:
			release()
			<-aDone
			t.Fatalf("the second server's events committed (%v) while the first's, given IDs before them, were not", err)
		default:
		}
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND objid <> $1 AND NOT granted`, holdKey).Scan(&n); err != nil {
			t.Fatal(err)
		}
		waiting = n > 0
		if !waiting && time.Now().After(deadline) {
			t.Fatal("the second server's write neither committed nor waited for the event log")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A reader now sees neither.
	var seen []*core.Event
	if err := b.View(ctx, func(tx store.Tx) error { var err error; seen, err = tx.ListEvents(core.EventFilter{}); return err }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 0 {
		t.Errorf("a reader saw %d events while both writes were uncommitted", len(seen))
	}
	release()
	if err := errors.Join(<-aDone, <-bDone); err != nil {
		t.Fatal(err)
	}
	if ea.ID >= eb.ID {
		t.Errorf("event IDs %d (committed first) and %d (after): want them in commit order", ea.ID, eb.ID)
	}
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Two servers writing as fast as they can, each with 16 callers: writes
// of rows of their own, and writes that each also draw the next value of
// one counter (a row every write changes, as every job submission draws
// the job sequence). No write fails however often the servers' writes of
// the counter meet: a write run again runs alone (the write gate), so
// it runs at most twice. It logs the writes a second and the runs again
// of each arm beside one server's: SHOAL_PG_WRITES_SECONDS=4 go test
// -run TestTwoServersWritingAtOnce -v ./store/postgres/ measures them
// (docs/internals/benchmarks.md).
func TestTwoServersWritingAtOnce(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	seconds := 0.5
	if v := os.Getenv("SHOAL_PG_WRITES_SECONDS"); v != "" {
		var err error
		if seconds, err = strconv.ParseFloat(v, 64); err != nil {
			t.Fatal(err)
		}
	}
	var retries atomic.Int64
	txobserve.SetRetries(func() { retries.Add(1) })
	defer txobserve.SetRetries(nil)
	for _, counter := range []bool{false, true} {
		for _, servers := range []int{1, 2} {
			url := pg.NewDatabase(t)
			var dbs []*postgres.DB
			for range servers {
				dbs = append(dbs, openOn(t, url))
			}
			retries.Store(0)
			var ok atomic.Int64
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failures []error
			stop := time.Now().Add(time.Duration(seconds * float64(time.Second)))
			for si, db := range dbs {
				for g := range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; time.Now().Before(stop); i++ {
							err := db.Update(t.Context(), func(tx store.Tx) error {
								if counter {
									if _, err := tx.NextSeq("job"); err != nil {
										return err
									}
								}
								return tx.PutSetting(fmt.Sprintf("k-%d-%d-%d", si, g, i), "v")
							})
							if err != nil {
								mu.Lock()
								failures = append(failures, err)
								mu.Unlock()
								return
							}
							ok.Add(1)
						}
					}()
				}
			}
			wg.Wait()
			arm := fmt.Sprintf("%d server(s), counter %v", servers, counter)
			for _, err := range failures {
				t.Errorf("%s: a write failed: %v", arm, err)
			}
			// Every write that returned is there, and the counter counted
			// each once.
			var n int64
			raw, err := sql.Open("pgx", url)
			if err != nil {
				t.Fatal(err)
			}
			err = raw.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM settings WHERE key LIKE 'k-%'`).Scan(&n)
			raw.Close()
			if err != nil {
				t.Fatal(err)
			}
			if n != ok.Load() {
				t.Errorf("%s: %d writes returned, %d are stored", arm, ok.Load(), n)
			}
			if counter {
				var next int64
				if err := dbs[0].Update(t.Context(), func(tx store.Tx) (err error) { next, err = tx.NextSeq("job"); return err }); err != nil {
					t.Fatal(err)
				}
				if next != n+1 {
					t.Errorf("%s: the counter's next value is %d after %d writes; want %d", arm, next, n, n+1)
				}
			}
			t.Logf("%s: %.0f writes/s, %d runs again", arm, float64(ok.Load())/seconds, retries.Load())
		}
	}
}

// A reader following the event log by ID inside a write (the notifier)
// never moves past an event another server commits after the write's
// snapshot: the events the write appended are not written, nor their
// IDs drawn, until it is about to commit, so the reader cannot see them
// with IDs above that event's. (They were written for any read of the
// log: the reader saw its own batch's events, above the other server's,
// and its cursor skipped the other server's for good.) A read that does
// not follow the log still sees what its transaction appended.
func TestFollowerInAWriteMissesNoOtherServersEvent(t *testing.T) {
	t.Parallel()
	url := testpg.Start(t).NewDatabase(t)
	a, b := openOn(t, url), openOn(t, url)
	ctx := t.Context()
	ev := func(ws string) *core.Event {
		return &core.Event{Time: time.Now(), Workspace: ws, ResourceType: "test", ResourceName: ws, Kind: "Test"}
	}
	first := ev("first")
	if err := a.Update(ctx, func(tx store.Tx) error { return tx.AppendEvent(first) }); err != nil {
		t.Fatal(err)
	}
	appended, other := make(chan struct{}), make(chan error, 1)
	var followed, all, following []*core.Event
	done := make(chan error, 1)
	go func() {
		done <- a.Update(ctx, func(tx store.Tx) error {
			if err := tx.AppendEvent(ev("mine")); err != nil {
				return err
			}
			close(appended)
			if err := <-other; err != nil {
				return err
			}
			var err error
			if followed, err = tx.ListEvents(core.EventFilter{AfterID: first.ID, Limit: 10}); err != nil {
				return err
			}
			if following, err = tx.ListEvents(core.EventFilter{Following: true}); err != nil {
				return err
			}
			all, err = tx.ListEvents(core.EventFilter{})
			return err
		})
	}()
	<-appended
	other <- b.Update(ctx, func(tx store.Tx) error { return tx.AppendEvent(ev("theirs")) })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, e := range followed {
		t.Errorf("the follower read event %d (%s) inside the write; want none: its own are not committed, the other server's after its snapshot", e.ID, e.Workspace)
	}
	if len(following) != 1 || following[0].ID != first.ID {
		t.Errorf("Following from 0 read %v; want only the first event", following)
	}
	if len(all) != 2 || all[1].Workspace != "mine" {
		t.Errorf("a plain read in the write read %d events; want the first and its own", len(all))
	}
	var log []*core.Event
	if err := b.View(ctx, func(tx store.Tx) (err error) { log, err = tx.ListEvents(core.EventFilter{}); return err }); err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 || log[1].Workspace != "theirs" || log[2].Workspace != "mine" {
		t.Errorf("the log after both: %d events; want first, theirs, mine (IDs in commit order)", len(log))
	}
}
