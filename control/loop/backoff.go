package loop

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Backoff defaults: a first failure is tried again after FirstWait, each
// further failure in a row doubles the wait up to MaxWait.
const (
	DefaultFirstWait = 5 * time.Second
	DefaultMaxWait   = 5 * time.Minute
)

// Backoff keeps, per item of a control loop (a pipeline, a sweep, an
// instance, a compute), its failures in a row, so that one item's
// failure neither fails the pass for the others nor is retried, and
// logged, on every pass: a pipeline whose step's output could not be
// read failed every pass of every loop for as long as the server ran
// (222 of them wrote 112 KB/s of log). The state is the leader's, in
// memory: a new leader tries every item again once.
type Backoff struct {
	// First is the wait after a first failure; each further failure in
	// a row doubles it, up to Max.
	First, Max time.Duration
	// GiveUp is how many failures in a row make Failed report the item
	// exhausted (the loop then ends it with the error, as Azure fails a
	// job it cannot run); 0 never gives up.
	GiveUp int

	mu    sync.Mutex
	items map[string]*Failure
}

// NewBackoff returns a backoff with the default waits that gives up
// after giveUp failures in a row (0: never).
func NewBackoff(giveUp int) *Backoff {
	return &Backoff{First: DefaultFirstWait, Max: DefaultMaxWait, GiveUp: giveUp}
}

// Failure is what an item's failures in a row were.
type Failure struct {
	// Count is how many failures in a row.
	Count int
	// Since is when the first of them was; Next when the item is tried
	// again.
	Since, Next time.Time
	// Code is the last error's code (core.ErrorCode), Err its message.
	Code string
	Err  string
	// Exhausted: Count reached GiveUp; the loop ends the item.
	Exhausted bool
}

// Reason is a failure as the item shows it: what failed, how often, and
// when it is tried again (or that it is not).
func (f Failure) Reason(what string) string {
	if f.Exhausted {
		return fmt.Sprintf("%s failed %d times in a row since %s: %s", what, f.Count, f.Since.UTC().Format(time.RFC3339), f.Err)
	}
	return fmt.Sprintf("%s failed (%d in a row), retried at %s: %s", what, f.Count, f.Next.UTC().Format(time.RFC3339), f.Err)
}

// Due reports whether key may be tried at now: it has not failed, or
// its wait is over.
func (b *Backoff) Due(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.items[key]
	return f == nil || !now.Before(f.Next)
}

// Failed records that key failed at now with err and returns its
// failures so far.
func (b *Backoff) Failed(key string, now time.Time, err error) Failure {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.items == nil {
		b.items = map[string]*Failure{}
	}
	f := b.items[key]
	if f == nil {
		f = &Failure{Since: now}
		b.items[key] = f
	}
	f.Count++
	wait := b.First
	if wait <= 0 {
		wait = DefaultFirstWait
	}
	max := b.Max
	if max <= 0 {
		max = DefaultMaxWait
	}
	for i := 1; i < f.Count && wait < max; i++ {
		wait *= 2
	}
	f.Next = now.Add(min(wait, max))
	f.Code, f.Err = core.ErrorCode(err), core.ErrorMessage(err)
	f.Exhausted = b.GiveUp > 0 && f.Count >= b.GiveUp
	return *f
}

// Succeeded forgets key's failures; it reports whether there were any.
func (b *Backoff) Succeeded(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.items[key]
	delete(b.items, key)
	return ok
}

// Failing returns key's failures in a row, if any.
func (b *Backoff) Failing(key string) (Failure, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.items[key]
	if !ok {
		return Failure{}, false
	}
	return *f, true
}

// Retain forgets the items live does not keep (ended, deleted).
func (b *Backoff) Retain(live func(key string) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.items {
		if !live(k) {
			delete(b.items, k)
		}
	}
}

// Item is one item of a pass as Each runs it.
type Item[T any] struct {
	// Key names the item in the backoff (stable across passes).
	Key string
	// Value is what step and failed receive.
	Value T
}

// Each runs step for every item of a pass that is due, one at a time:
// an item's failure is the item's, not the pass's. It is recorded in b,
// logged once (log may be nil) and handed to failed, which records it on
// the item (a reason, an event) or ends it when exhausted; the item is
// then not tried again before its wait is over, and the pass goes on
// with the others. An item that steps without error again loses its
// failures. Items no longer in the pass are forgotten. It returns how
// many items failed in this pass.
func Each[T any](b *Backoff, now time.Time, log *slog.Logger, what string, items []Item[T], step func(T) error, failed func(T, Failure)) int {
	live := make(map[string]bool, len(items))
	n := 0
	for _, it := range items {
		live[it.Key] = true
		if !b.Due(it.Key, now) {
			continue
		}
		err := step(it.Value)
		if err == nil {
			b.Succeeded(it.Key)
			continue
		}
		n++
		f := b.Failed(it.Key, now, err)
		if log != nil {
			// Once per failure, which is once per wait: never on every
			// pass.
			log.Warn(what+" failed", slog.String("item", it.Key), slog.Int("failures", f.Count),
				slog.Time("retry_at", f.Next), slog.Bool("gave_up", f.Exhausted), slog.Any("err", err))
		}
		if failed != nil {
			failed(it.Value, f)
		}
	}
	b.Retain(func(k string) bool { return live[k] })
	return n
}

// Context returns err with what it was about before its message (the
// item's reason then says "output o of step a: …"), keeping its code,
// and its detail for the log when it is not Shoal's.
func Context(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	return &contextError{shown: &core.Error{Code: core.ErrorCode(err), Message: what + ": " + core.ErrorMessage(err)}, cause: err, what: what}
}

// contextError is Context's error: a *core.Error to errors.As (what the
// item shows), the cause's whole text to Error (what the log shows).
type contextError struct {
	shown *core.Error
	cause error
	what  string
}

func (e *contextError) Error() string { return e.what + ": " + e.cause.Error() }

func (e *contextError) Unwrap() error { return e.cause }

// As makes errors.As find the shown error before the cause's.
func (e *contextError) As(target any) bool {
	if t, ok := target.(**core.Error); ok {
		*t = e.shown
		return true
	}
	return false
}
