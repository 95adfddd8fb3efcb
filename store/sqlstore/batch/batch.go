// Package batch group-commits a SQL store's Updates: those that arrive
// while another is being written share one transaction (Batcher), each in
// a savepoint of its own, with the queries of sqlstore; a batch the
// database will not commit beside another writer's runs again.
package batch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore"
	"github.com/shoal-ml/shoal/store/sqlstore/appendlog"
	"github.com/shoal-ml/shoal/store/sqlstore/diskfull"
	"github.com/shoal-ml/shoal/store/sqlstore/failpoint"
	"github.com/shoal-ml/shoal/store/sqlstore/stmtcache"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// maxBatch bounds how many Updates share one transaction, so that a
// caller that joins a batch waits for at most this many others.
const maxBatch = 64

// Batcher runs the Updates that arrive while another is being written in
// one transaction (group commit). On a store whose every transaction
// costs round trips (PostgreSQL: begin, the write gate, commit), the
// callers then share those round trips instead of each paying them,
// holding a connection. Each Update keeps its own outcome: it runs inside
// a savepoint, and a failing one is rolled back to it without touching
// the others. The Updates run in order of arrival, with their own context
// values (a fence) and their own time, once, or again with the whole
// batch when the database asks (Retry): only the last run commits.
type Batcher struct {
	// DB is the pool transactions are begun on, Stmts its statement cache
	// and Options the transactions' options.
	DB      *sql.DB
	Stmts   *stmtcache.Cache
	Options *sql.TxOptions
	// Now gives each Update its time.
	Now func() time.Time
	// Begin runs first in each transaction; alone is true in a run again
	// (Retry), which Begin makes the only write in progress (PostgreSQL:
	// the write gate, which other writes take shared, taken exclusive),
	// so that it meets no other write and a batch runs twice at most, all
	// but always.
	Begin func(ctx context.Context, tx *sql.Tx, alone bool) error
	// Check runs before each Update with that Update's context (a
	// fence's check); its error is the Update's.
	Check func(ctx context.Context, tx *sql.Tx) error
	// Timeout bounds a batch's transaction, from its begin to its commit
	// (0: no bound). A batch is not one caller's, so no caller's deadline
	// bounds it: without this a batch on a connection the network
	// stopped carrying waited until the operating system gave up on it,
	// and with it every Update of the store.
	Timeout time.Duration
	// Retry, when set, says whether err (a statement's or the commit's)
	// is the database asking for the whole transaction to be run again:
	// PostgreSQL's serialization failure or deadlock. The batch is then
	// rolled back and every Update's fn runs again in a new transaction,
	// up to MaxRetries times, after a random wait; fn must then have no
	// effect outside tx that a second run would repeat (store.Store).
	Retry func(err error) bool
	// Aborted, when set, says whether err is the database refusing a
	// statement because the transaction was already aborted, or a commit
	// that rolled back instead: what an Update leaves behind when it took
	// a conflict (Retry's) for a row's absence and went on. A batch that
	// ran beside other writes runs again alone for it; one that ran alone
	// cannot have met a conflict, so there it is the Update's own error,
	// and the Update fails alone (rolled back to its savepoint). It does
	// not make the store's next batches run alone (AloneFor).
	Aborted func(err error) bool
	// MaxRetries bounds the runs again of one batch.
	MaxRetries int
	// AloneFor, when set, is how long (by Now) after a conflict this
	// store's batches run alone from their first run (Begin's alone), since
	// writes that just conflicted with others' are likely to again: two
	// servers drawing one counter flat out then take turns as under one
	// lock instead of each running most batches twice.
	AloneFor time.Duration
	// Logs, when set, writes a batch's events and audit records in tx:
	// the Updates' appends wait in an appendlog.Log and are written in
	// one statement per log before the batch commits, instead of a round
	// trip each. Nil writes each as it is appended.
	Logs func(tx *sql.Tx) appendlog.Writer

	mu      sync.Mutex
	queue   []*batchCall
	leading bool
	// lastConflict is when, by Now, a batch last met a conflict (Retry);
	// zero: never. Guarded by mu.
	lastConflict time.Time
}

// batchCall is one Update waiting in a Batcher.
type batchCall struct {
	ctx context.Context
	fn  func(store.Tx) error
	err error
	// wake is signalled once: when the call is done, or when its caller
	// must lead the next batch (done is then false).
	wake chan struct{}
	done bool
	// panicked holds what fn panicked with, re-raised in its caller.
	panicked any
	// ran: fn ran under the batch's deadline (callWithin). A caller gone
	// before its turn did not, and its error is its own context's.
	ran bool
}

// Update runs fn in a read-write transaction shared with the Updates
// waiting at the same time, and returns fn's error unchanged (nil once
// the transaction committed). The caller whose Update finds no batch in
// progress writes the batch; the others wait for it, and one of those
// still waiting writes the next.
func (b *Batcher) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	c := &batchCall{ctx: ctx, fn: fn, wake: make(chan struct{}, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.leading {
		b.mu.Unlock()
		<-c.wake
		if c.done {
			return c.result()
		}
		b.mu.Lock() // leadership was handed over: c is at the head
	}
	b.leading = true
	for !c.done {
		n := min(len(b.queue), maxBatch)
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.write(batch)
		for _, o := range batch {
			if o != c {
				o.wake <- struct{}{}
			}
		}
		b.mu.Lock()
	}
	// Hand over: the caller at the head of what waits writes next, so
	// that no caller writes others' batches for longer than its own.
	if len(b.queue) > 0 {
		b.queue[0].wake <- struct{}{}
	} else {
		b.leading = false
	}
	b.mu.Unlock()
	return c.result()
}

// Waiting returns how many Updates wait for a batch (tests use it to
// queue Updates behind one held in progress).
func (b *Batcher) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// result returns the call's outcome, re-raising its panic.
func (c *batchCall) result() error {
	if c.panicked != nil {
		panic(c.panicked)
	}
	return c.err
}

// write runs calls in one transaction and marks each done. When the
// database asks for the transaction to be run again (Retry), every call
// runs again in a new one, up to MaxRetries times.
func (b *Batcher) write(calls []*batchCall) {
	defer func() {
		for _, c := range calls {
			c.done = true
		}
	}()
	began := time.Now() // latency is wall time, whatever the store's clock says
	if err := failpoint.Check(); err != nil {
		failAll(calls, err)
		return
	}
	// The transaction is not the callers': one caller giving up must not
	// end the others' writes. Each Update's statements run with its own
	// context's values but not its cancellation (a statement cancelled
	// half-way breaks the connection, and with it the batch); a caller
	// already gone when its turn comes is not run. Only the batch's own
	// bound (Timeout), over all its tries, ends it.
	ctx := context.Background()
	if b.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.Timeout)
		defer cancel()
		defer b.timedOut(ctx, calls)
	}
	// While this store's writes keep meeting others' (a conflict in the
	// last AloneFor, by the store's clock), a batch runs alone from its
	// first run: run first beside the others, it would most likely
	// conflict again and run twice.
	alone := b.aloneNow()
	for try := 1; ; try++ {
		err := b.attempt(ctx, calls, try, alone || try > 1)
		if err == nil {
			break
		}
		if b.Retry != nil && b.Retry(err) {
			b.conflicted()
		}
		// Run again: nothing of this try was committed. What the calls
		// were told by it is forgotten, and the next try runs each of
		// them anew, in a transaction whose snapshot follows the
		// conflicting writer's commit.
		if try > b.MaxRetries || ctx.Err() != nil {
			why := fmt.Errorf("%w (%d tries): %w", errNotSerialised, try, err)
			if ctx.Err() != nil {
				why = fmt.Errorf("%w (%s, %d tries): %w", errWriteTimedOut, b.Timeout, try, err)
			}
			for _, c := range calls {
				if b.Retry != nil && b.Retry(c.err) || b.Aborted != nil && b.Aborted(c.err) || c.err == nil && c.panicked == nil {
					c.err = why
				}
			}
			break
		}
		txobserve.Retried()
		for _, c := range calls {
			c.err, c.panicked, c.ran = nil, nil, false
		}
		if !sleepCtx(ctx, backoff(try)) {
			failAll(calls, fmt.Errorf("%w (%s, %d tries): %w", errWriteTimedOut, b.Timeout, try, err))
			break
		}
	}
	// One observation per Update, each the batch's duration: what its
	// caller waited for the store.
	d := time.Since(began)
	for _, c := range calls {
		txobserve.Transaction(false, d, c.err)
	}
	// The leader began as soon as its batch was taken: the batch held
	// the write path all along.
	txobserve.Write(len(calls), d)
}

// aloneNow says whether a batch begun now runs alone from its first run
// (AloneFor).
func (b *Batcher) aloneNow() bool {
	if b.AloneFor <= 0 {
		return false
	}
	b.mu.Lock()
	last := b.lastConflict
	b.mu.Unlock()
	return !last.IsZero() && b.Now().Sub(last) < b.AloneFor
}

// conflicted records that a batch met a conflict now.
func (b *Batcher) conflicted() {
	now := b.Now()
	b.mu.Lock()
	b.lastConflict = now
	b.mu.Unlock()
}

// errNotSerialised marks a write the database would not commit beside
// another server's, however often it was run again.
var errNotSerialised = core.Errorf(core.EUNAVAILABLE, "store: the write conflicted with another write each time it was run")

// errRunAgainInjected has a write run again in the tests that look for
// an Update not safe to run twice (failpoint.RunAgain).
var errRunAgainInjected = errors.New("store: failpoint: run again")

// failAll gives err to every call that has no outcome yet.
func failAll(calls []*batchCall, err error) {
	for _, c := range calls {
		if c.err == nil && c.panicked == nil {
			c.err = err
		}
	}
}

// backoff is how long a batch waits before its try+1'th run: a random
// time up to 2^try milliseconds (at most 256), so that the servers whose
// writes conflicted do not meet again at once. The global source, not an
// injected one: the jitter spreads load on the database and decides
// nothing that a simulation replays.
func backoff(try int) time.Duration {
	ceiling := time.Millisecond << min(try, 8)
	return time.Duration(rand.Int64N(int64(ceiling)))
}

// sleepCtx waits d, or until ctx is done (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// attempt runs calls once in one transaction (the try'th time; alone: as
// the only write in progress, Begin's), setting each call's outcome, and returns the error for which the database asks for the
// whole transaction to be run again (Retry), rolled back with nothing of
// it committed; nil when the calls' outcomes are final.
func (b *Batcher) attempt(ctx context.Context, calls []*batchCall, try int, alone bool) (again error) {
	retry := func(err error) bool {
		return err != nil && (b.Retry != nil && b.Retry(err) || !alone && b.Aborted != nil && b.Aborted(err))
	}
	stx, err := b.DB.BeginTx(ctx, b.Options)
	if err != nil {
		failAll(calls, fmt.Errorf("store: begin transaction: %w", err))
		return nil
	}
	committed := false
	defer func() {
		if !committed {
			_ = stx.Rollback()
		}
	}()
	if b.Begin != nil {
		// A run again runs alone: no other write is in progress while
		// it runs, so it does not conflict again, however busy the
		// other servers are (before, a batch that met another server's
		// writes of one row nine times in a row failed).
		if err := b.Begin(ctx, stx, alone); err != nil {
			if retry(err) {
				return err
			}
			failAll(calls, err)
			return nil
		}
	}
	var unprepared []string
	// The Updates of the batch share its reads of rarely written rows
	// (sqlstore.ReadCache): on SQLite the batch holds the only write
	// connection from its first statement to its commit; on PostgreSQL
	// its snapshot is the transaction's, taken at its first statement,
	// so a row read again would read the same (Options: SERIALIZABLE).
	cache := sqlstore.NewReadCache()
	var log *appendlog.Log
	if b.Logs != nil {
		log = appendlog.New(ctx, b.Logs(stx))
	}
	// With more than one Update, each runs after a savepoint: a failing
	// one is rolled back to it (which keeps the savepoint, at the same
	// place, for the next), a succeeding one releases it and sets the
	// next in one round trip; the last needs neither (the commit ends
	// them all).
	savepoint := len(calls) > 1
	established := false
	ok := 0
	for i, c := range calls {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			continue
		}
		if savepoint && !established {
			if _, err := stx.ExecContext(ctx, "SAVEPOINT shoal_call"); err != nil {
				if retry(err) {
					return err
				}
				failAll(calls, fmt.Errorf("store: savepoint: %w", err))
				return nil
			}
			established = true
		}
		mark := log.Mark()
		c.ran = true
		c.err = b.callWithin(ctx, stx, cache, log, c, &unprepared)
		if retry(c.err) {
			// The database chose this transaction to give way to
			// another's: all of it runs again, the Updates before this
			// one included, none of it committed.
			return c.err
		}
		failed := c.err != nil || c.panicked != nil
		if !failed {
			ok++
		}
		switch {
		case !savepoint:
			if c.panicked != nil {
				return nil
			}
		case failed:
			// What the failed Update read may show its own writes, and
			// the log rows it appended (or wrote) are rolled back with it.
			cache.Reset()
			log.Undo(mark)
			if _, err := stx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT shoal_call"); err != nil {
				if retry(err) {
					return err
				}
				failAll(calls, fmt.Errorf("store: roll back to savepoint: %w", err))
				return nil
			}
		case i < len(calls)-1 || alone:
			// Run alone, the last Update releases its savepoint too (a
			// round trip more, on this rare path): an Update that went
			// on after a statement of its own failed leaves the
			// transaction aborted, and it is found here, where it can
			// fail alone, rather than at the commit, which would fail
			// every Update of the batch.
			release := "RELEASE SAVEPOINT shoal_call; SAVEPOINT shoal_call"
			if i == len(calls)-1 {
				release = "RELEASE SAVEPOINT shoal_call"
			}
			if _, err := stx.ExecContext(ctx, release); err != nil {
				if retry(err) {
					return err
				}
				if !(alone && b.Aborted != nil && b.Aborted(err)) {
					failAll(calls, fmt.Errorf("store: release savepoint: %w", err))
					return nil
				}
				c.err = fmt.Errorf("store: the update went on after the database refused one of its statements: %w", err)
				ok--
				cache.Reset()
				log.Undo(mark)
				if _, err := stx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT shoal_call"); err != nil {
					failAll(calls, fmt.Errorf("store: roll back to savepoint: %w", err))
					return nil
				}
			}
		}
	}
	if ok > 0 && try == 1 && failpoint.RunAgain() {
		return errRunAgainInjected
	}
	if ok > 0 {
		// The log rows go in last, in the transaction: they commit or
		// roll back with the Updates that appended them.
		if err := log.Flush(); err != nil {
			if retry(err) {
				return err
			}
			failAll(calls, diskfull.Classify(fmt.Errorf("store: write the batch's events and audit records: %w", err)))
			return nil
		}
		if err := stx.Commit(); err != nil {
			if retry(err) {
				// A serialization failure at commit: rolled back.
				committed = true
				return err
			}
			failAll(calls, diskfull.Classify(fmt.Errorf("store: commit: %w", err)))
			return nil
		}
		committed = true
	} else {
		// Ended before the statements are prepared: on a pool of one
		// connection (SQLite's writer) they wait for it.
		_ = stx.Rollback()
		committed = true
	}
	if len(unprepared) > 0 && b.Stmts != nil {
		b.Stmts.Prepare(context.Background(), unprepared)
	}
	return nil
}

// callWithin runs c within the batch's ctx: with its caller's values (a
// fence, a request's identity) and the batch's deadline, not the
// caller's cancellation.
func (b *Batcher) callWithin(ctx context.Context, stx *sql.Tx, cache *sqlstore.ReadCache, log *appendlog.Log, c *batchCall, unprepared *[]string) error {
	cctx := context.WithoutCancel(c.ctx)
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		cctx, cancel = context.WithDeadline(cctx, deadline)
		defer cancel()
	}
	return b.call(cctx, stx, cache, log, b.Now(), c, unprepared)
}

// timedOut says, in the error of each call that failed once the batch's
// Timeout ran out, that the database did not complete the write in time:
// the statement's own error is then a cancelled context's. An Update's
// own answer (an error with a code: not found, a conflict) stays its
// answer: it wrote nothing either way.
func (b *Batcher) timedOut(ctx context.Context, calls []*batchCall) {
	// Each Update's context has the batch's deadline on a timer of its
	// own (callWithin), and no other deadline: one that ran and ended on
	// a deadline ended on the batch's, even when ctx's own timer has not
	// fired yet (a CI run saw the error come back with ctx not yet done).
	for _, c := range calls {
		onDeadline := ctx.Err() != nil || c.ran && errors.Is(c.err, context.DeadlineExceeded)
		if onDeadline && c.err != nil && core.ErrorCode(c.err) == core.EINTERNAL {
			c.err = fmt.Errorf("%w (%s): %w", errWriteTimedOut, b.Timeout, c.err)
		}
	}
}

// errWriteTimedOut marks a write its batch's Timeout ended.
var errWriteTimedOut = core.Errorf(core.EUNAVAILABLE, "store: the database did not answer the write in time (it may not have been applied)")

// call runs one Update's check and fn in stx with ctx, the batch's cache
// and log and now, catching a panic for its caller; the queries it ran unprepared
// join *unprepared.
func (b *Batcher) call(ctx context.Context, stx *sql.Tx, cache *sqlstore.ReadCache, log *appendlog.Log, now time.Time, c *batchCall, unprepared *[]string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.panicked = p
			err = fmt.Errorf("store: update panicked: %v", p)
		}
	}()
	if b.Check != nil {
		if err := b.Check(ctx, stx); err != nil {
			return err
		}
	}
	return diskfull.Classify(sqlstore.Within(ctx, stx, b.Stmts, cache, log, now, c.fn, unprepared))
}
