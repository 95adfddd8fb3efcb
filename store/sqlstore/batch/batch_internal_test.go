package batch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/stmtcache"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
	_ "modernc.org/sqlite" // a real database to write in
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

// newBatcher returns a Batcher on a SQLite file with the settings table,
// and the count of transactions it has begun.
func newBatcher(t *testing.T) (*Batcher, *atomic.Int64) {
	db := openSettings(t)
	var txs atomic.Int64
	b := &Batcher{DB: db, Stmts: stmtcache.New(db), Now: time.Now,
		Begin: func(ctx context.Context, tx *sql.Tx, alone bool) error { txs.Add(1); return nil }}
	t.Cleanup(func() { b.Stmts.Close() })
	return b, &txs
}

// hold starts an Update that blocks until release is closed, and waits
// until it runs, so that the Updates started next queue behind it.
func hold(t *testing.T, b *Batcher, release chan struct{}) <-chan error {
	running := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- b.Update(t.Context(), func(tx store.Tx) error {
			close(running)
			<-release
			return tx.PutSetting("held", "1")
		})
	}()
	<-running
	return done
}

// waitQueued waits until n Updates wait behind the one being written.
func waitQueued(t *testing.T, b *Batcher, n int) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.mu.Lock()
		q := len(b.queue)
		b.mu.Unlock()
		if q >= n {
			return
		}
	}
	t.Fatalf("%d Updates never queued", n)
}

func setting(t *testing.T, b *Batcher, key string) (string, bool) {
	var v string
	err := b.DB.QueryRow(`SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// Updates that arrive while one is written share the next transaction,
// and none of their read-modify-writes is lost.
func TestBatcherSharesTransactions(t *testing.T) {
	b, txs := newBatcher(t)
	release := make(chan struct{})
	first := hold(t, b, release)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.Update(t.Context(), func(tx store.Tx) error {
				v, err := tx.GetSetting("counter")
				if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
					return err
				}
				c, _ := strconv.Atoi(v)
				return tx.PutSetting("counter", strconv.Itoa(c+1))
			})
		}()
	}
	waitQueued(t, b, n)
	var writes, updates atomic.Int64
	txobserve.SetWrites(func(u int, held time.Duration) {
		writes.Add(1)
		updates.Add(int64(u))
	})
	defer txobserve.SetWrites(nil)
	close(release)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The write observer (the server's write-path metrics) is told of
	// each transaction once, with the Updates it carried.
	if w, u := writes.Load(), updates.Load(); w != 2 || u != n+1 {
		t.Errorf("write observer: %d transactions carrying %d Updates; want 2 carrying %d", w, u, n+1)
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := setting(t, b, "counter"); v != strconv.Itoa(n) {
		t.Fatalf("counter = %q after %d increments", v, n)
	}
	if got := txs.Load(); got != 2 {
		t.Fatalf("%d transactions for one held Update and %d queued behind it; want 2", got, n)
	}
}

// An Update that fails in a batch is rolled back alone: its error comes
// back unchanged, its writes are gone, the others' are committed.
func TestBatcherFailureIsRolledBackAlone(t *testing.T) {
	b, _ := newBatcher(t)
	release := make(chan struct{})
	first := hold(t, b, release)
	errBoom := errors.New("boom")
	results := make([]chan error, 3)
	for i := range results {
		results[i] = make(chan error, 1)
		go func() {
			results[i] <- b.Update(t.Context(), func(tx store.Tx) error {
				if err := tx.PutSetting(fmt.Sprint("k", i), "v"); err != nil {
					return err
				}
				if i == 1 {
					return errBoom
				}
				return nil
			})
		}()
		waitQueued(t, b, i+1) // in this order
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, ch := range results {
		err := <-ch
		if (i == 1) != errors.Is(err, errBoom) || i != 1 && err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
		if _, ok := setting(t, b, fmt.Sprint("k", i)); ok != (i != 1) {
			t.Fatalf("Update %d's write kept = %v", i, ok)
		}
	}
}

// A panic in an Update reaches its own caller; the Updates batched with it
// are committed.
func TestBatcherPanicReachesItsCaller(t *testing.T) {
	b, _ := newBatcher(t)
	release := make(chan struct{})
	first := hold(t, b, release)
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		b.Update(t.Context(), func(tx store.Tx) error {
			tx.PutSetting("p", "1")
			panic("in fn")
		})
	}()
	waitQueued(t, b, 1)
	other := make(chan error, 1)
	go func() {
		other <- b.Update(t.Context(), func(tx store.Tx) error { return tx.PutSetting("other", "1") })
	}()
	waitQueued(t, b, 2)
	close(release)
	if p := <-panicked; p != "in fn" {
		t.Fatalf("recovered %v; want the Update's panic", p)
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if _, ok := setting(t, b, "p"); ok {
		t.Fatal("the panicking Update's write was committed")
	}
	if _, ok := setting(t, b, "other"); !ok {
		t.Fatal("the Update batched with a panicking one was lost")
	}
}

// A caller that gave up while waiting gets its context's error, and its
// Update never runs.
func TestBatcherSkipsCancelledCallers(t *testing.T) {
	b, _ := newBatcher(t)
	release := make(chan struct{})
	first := hold(t, b, release)
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan error, 1)
	ran := false
	go func() {
		got <- b.Update(ctx, func(tx store.Tx) error { ran = true; return nil })
	}()
	waitQueued(t, b, 1)
	cancel()
	close(release)
	if err := <-got; !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("Update with a cancelled context: %v, ran %v", err, ran)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// Many callers at once: each gets its own outcome, whoever writes the
// batches (leadership passes from caller to caller).
func TestBatcherManyCallers(t *testing.T) {
	b, _ := newBatcher(t)
	const n = 300
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := b.Update(t.Context(), func(tx store.Tx) error {
				if i%7 == 0 {
					return core.Errorf(core.ECONFLICT, "call %d", i)
				}
				return tx.PutSetting(fmt.Sprint("m", i), "v")
			})
			if (err != nil) != (i%7 == 0) {
				t.Errorf("call %d: %v", i, err)
			}
			if err != nil {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	var rows int
	if err := b.DB.QueryRow(`SELECT COUNT(*) FROM settings`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if want := n - int(failed.Load()); rows != want {
		t.Fatalf("%d rows; want %d", rows, want)
	}
}

// ctxKey carries a value through an Update's context.
type ctxKey struct{}

// A batch's Timeout ends its transaction however its callers' contexts
// stand (no caller's deadline bounds a batch): an Update still writing
// when it runs out fails as the database's silence (unavailable), nothing
// of the batch lands, and the next batch writes. Each Update's context
// keeps its caller's values inside the batch.
func TestBatchTimeout(t *testing.T) {
	b, _ := newBatcher(t)
	b.Timeout = 500 * time.Millisecond
	var seen any
	b.Check = func(ctx context.Context, tx *sql.Tx) error { seen = ctx.Value(ctxKey{}); return nil }
	ctx := context.WithValue(t.Context(), ctxKey{}, "caller's")
	err := b.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutSetting("slow", "1"); err != nil {
			return err
		}
		time.Sleep(time.Second) // a statement the database never answered
		return tx.PutSetting("slow", "2")
	})
	if core.ErrorCode(err) != core.EUNAVAILABLE || !errors.Is(err, errWriteTimedOut) {
		t.Fatalf("an Update past its batch's Timeout: %v; want unavailable", err)
	}
	if seen != "caller's" {
		t.Errorf("the Update's context inside its batch carried %v; want its caller's value", seen)
	}
	// An Update's own answer stays its answer when its batch then
	// runs out of time: it wrote nothing either way.
	release := make(chan struct{})
	held := hold(t, b, release)
	mine := core.Errorf(core.ENOTFOUND, "no such thing")
	own := make(chan error, 1)
	go func() { own <- b.Update(t.Context(), func(tx store.Tx) error { return mine }) }()
	for b.Waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		// The held Update ends; the next batch's second Update outlasts it.
		_ = b.Update(t.Context(), func(tx store.Tx) error { time.Sleep(time.Second); return tx.PutSetting("slow", "3") })
	}()
	for b.Waiting() < 2 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	<-held
	if err := <-own; !errors.Is(err, mine) || core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("an Update's own error in a batch that ran out of time: %v; want its own (not found)", err)
	}
	if err := b.Update(t.Context(), func(tx store.Tx) error { return tx.PutSetting("next", "1") }); err != nil {
		t.Fatalf("the next batch: %v", err)
	}
	var n int
	if err := b.DB.QueryRow(`SELECT COUNT(*) FROM settings WHERE key = 'slow'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the timed-out batch's rows: %d, %v; want none", n, err)
	}
}

// errRunAgain stands for PostgreSQL's serialization failure in the
// tests of Retry.
var errRunAgain = errors.New("run again")

// A batch in which one Update meets an error the database says calls
// for the whole transaction to run again (Retry) runs again from its
// begin, every Update of it anew, the ones before that Update included,
// and commits what the last run wrote: nothing of the first run is kept,
// and each caller gets its last run's outcome.
func TestBatchRunsAgainWhenTheDatabaseAsks(t *testing.T) {
	b, txs := newBatcher(t)
	b.Retry = func(err error) bool { return errors.Is(err, errRunAgain) }
	b.MaxRetries = 3
	var alone []bool // each transaction's Begin: a run again runs alone
	begin := b.Begin
	b.Begin = func(ctx context.Context, tx *sql.Tx, a bool) error {
		alone = append(alone, a)
		return begin(ctx, tx, a)
	}
	release := make(chan struct{})
	held := hold(t, b, release)
	var runs [3]atomic.Int64
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.Update(t.Context(), func(tx store.Tx) error {
				run := runs[i].Add(1)
				if err := tx.PutSetting(fmt.Sprint("k", i), fmt.Sprint("run ", run)); err != nil {
					return err
				}
				switch {
				case i == 1 && run == 1:
					return fmt.Errorf("a statement: %w", errRunAgain)
				case i == 2:
					return core.Errorf(core.ENOTFOUND, "its own answer")
				}
				return nil
			})
		}()
		waitQueued(t, b, i+1)
	}
	before := txs.Load()
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || core.ErrorCode(errs[2]) != core.ENOTFOUND {
		t.Fatalf("outcomes %v; want nil, nil and the third's own not found", errs)
	}
	// The third had not run when the second asked: it runs once.
	for i, want := range []int64{2, 2, 1} {
		if got := runs[i].Load(); got != want {
			t.Errorf("Update %d ran %d times; want %d (the batch ran again from its first)", i, got, want)
		}
	}
	if got := txs.Load() - before; got != 2 {
		t.Errorf("%d transactions for the batch; want 2 (one run again)", got)
	}
	// The held Update's transaction, the batch's, its run again.
	if fmt.Sprint(alone) != "[false false true]" {
		t.Errorf("Begin's alone, transaction by transaction: %v; want [false false true] (only the run again alone)", alone)
	}
	for i, want := range []string{"run 2", "run 2", ""} {
		if v, _ := setting(t, b, fmt.Sprint("k", i)); v != want {
			t.Errorf("k%d = %q; want %q", i, v, want)
		}
	}
}

// A write that the database asks to run again every time fails, after
// MaxRetries runs again, as unavailable (a 503, which clients retry),
// with the database's words, and writes nothing.
func TestBatchThatAlwaysConflictsFailsUnavailable(t *testing.T) {
	b, _ := newBatcher(t)
	b.Retry = func(err error) bool { return errors.Is(err, errRunAgain) }
	b.MaxRetries = 2
	var runs atomic.Int64
	err := b.Update(t.Context(), func(tx store.Tx) error {
		runs.Add(1)
		if err := tx.PutSetting("k", "v"); err != nil {
			return err
		}
		return errRunAgain
	})
	if core.ErrorCode(err) != core.EUNAVAILABLE || !errors.Is(err, errRunAgain) {
		t.Fatalf("err = %v; want unavailable, wrapping the database's error", err)
	}
	if got := runs.Load(); got != 3 {
		t.Errorf("ran %d times; want 3 (MaxRetries 2 runs again)", got)
	}
	if _, ok := setting(t, b, "k"); ok {
		t.Error("a write that never committed left its setting")
	}
}

// After a batch met a conflict, the store's batches run alone from their
// first run for AloneFor by the store's clock, and beside others again
// after it; an aborted transaction (Aborted) does not count as a conflict.
func TestBatchesRunAloneForAWhileAfterAConflict(t *testing.T) {
	b, _ := newBatcher(t)
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	b.Now = func() time.Time { return now }
	b.Retry = func(err error) bool { return errors.Is(err, errRunAgain) }
	b.Aborted = func(err error) bool { return errors.Is(err, errAborted) }
	b.MaxRetries = 3
	b.AloneFor = 500 * time.Millisecond
	var alone []bool
	begin := b.Begin
	b.Begin = func(ctx context.Context, tx *sql.Tx, a bool) error {
		alone = append(alone, a)
		return begin(ctx, tx, a)
	}
	write := func(fail error) {
		t.Helper()
		runs := 0
		err := b.Update(t.Context(), func(tx store.Tx) error {
			runs++
			if runs == 1 && fail != nil {
				return fail
			}
			return tx.PutSetting("k", fmt.Sprint(runs))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	write(nil)                 // beside others
	write(errRunAgain)         // a conflict: run again alone
	write(nil)                 // within AloneFor: alone
	now = now.Add(time.Second) // past it
	write(nil)                 // beside others again
	write(errAborted)          // aborted beside others: run again alone, no conflict counted
	write(nil)                 // beside others
	if got, want := fmt.Sprint(alone), "[false false true true false false true false]"; got != want {
		t.Errorf("Begin's alone, transaction by transaction: %s; want %s", got, want)
	}
}

// errAborted stands for a statement PostgreSQL refused in an aborted
// transaction.
var errAborted = errors.New("aborted")
