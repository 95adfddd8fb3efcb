package sqlstore

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// heldWrite is a write of one row that a Together holds back, to send
// with the others in one statement when it ends.
type heldWrite struct {
	// row names the row written (its table and key): two writes of one
	// row never share a statement, whose parts all see the same snapshot
	// and would leave only one of the two.
	row string
	// fast and full are as tx.update's; full is empty for a write that
	// has no second form (an INSERT).
	fast, full string
	args       []any
	// done checks the rows the write changed (or its error) and words
	// its outcome for the caller that asked for it.
	done func(n int64, err error) error
}

// Together implements store.Tx. With combine (PostgreSQL) the writes of
// jobs, attempts and nodes in fn are held and sent when fn returns as one
// statement, a data-modifying WITH whose parts each return the rows they
// changed: a report that frees a node and gives it its next job wrote
// the node, the new attempt and the job in three round trips one after
// another under the store's write lock, and now in one. Without combine
// (SQLite, whose statements are calls, not round trips) fn runs as it is.
func (t *tx) Together(fn func(store.Tx) error) error {
	if !t.combine || t.holding {
		return fn(t) // a Together inside another joins it
	}
	t.holding = true
	err := fn(t)
	held := t.held
	t.held, t.holding = nil, false
	if herr := t.heldErr; herr != nil {
		// What an earlier send inside fn failed with is the cause of
		// whatever fn then met (on PostgreSQL the transaction is aborted).
		t.heldErr = nil
		return herr
	}
	if err != nil {
		return err // the caller rolls back: what is held is not sent
	}
	return t.send(held)
}

// write runs a write of one row now or, inside a Together that combines,
// holds it. row names the row; fast, full and args are as update's (full
// empty: fast alone, its rows counted); done turns the rows changed, or
// the error, into the caller's outcome.
func (t *tx) write(row, fast, full string, args []any, done func(n int64, err error) error) error {
	if !t.holding {
		n, err := t.runWrite(fast, full, args)
		return done(n, err)
	}
	if slices.ContainsFunc(t.held, func(h heldWrite) bool { return h.row == row }) {
		if err := t.sendHeld(); err != nil {
			return err
		}
	}
	// A read served from the transaction's cache must not miss this
	// write: forget what it names now, as exec would.
	t.cache.Forget(fast)
	if full != "" {
		t.cache.Forget(full)
	}
	t.held = append(t.held, heldWrite{row: row, fast: fast, full: full, args: args, done: done})
	return nil
}

// runWrite runs fast (and full when fast changes no row) and returns the
// rows changed.
func (t *tx) runWrite(fast, full string, args []any) (int64, error) {
	if full != "" {
		return t.update(fast, full, args...)
	}
	res, err := t.exec(fast, args...)
	if err != nil {
		return 0, err
	}
	return affected(res)
}

// sendHeld sends what a Together holds before another statement runs, so
// that the statement sees it; its error is also kept for the Together to
// return.
func (t *tx) sendHeld() error {
	held := t.held
	t.held = nil
	err := t.send(held)
	if err != nil && t.heldErr == nil {
		t.heldErr = err
	}
	return err
}

// send runs held writes: one alone as it is, several as one statement.
// It returns the first of their outcomes that is an error.
func (t *tx) send(held []heldWrite) error {
	switch len(held) {
	case 0:
		return nil
	case 1:
		w := held[0]
		return w.done(t.runWrite(w.fast, w.full, w.args))
	}
	query, args := combined(held)
	n := make([]int64, len(held))
	dest := make([]any, len(held))
	for i := range n {
		dest[i] = &n[i]
	}
	txobserve.Statement(t.ctx)
	if err := t.tx.QueryRowContext(t.ctx, query, args...).Scan(dest...); err != nil {
		rows := make([]string, len(held))
		for i, w := range held {
			rows[i] = w.row
		}
		return fmt.Errorf("store: write %s: %w", strings.Join(rows, ", "), err)
	}
	var first error
	for i, w := range held {
		var err error
		if n[i] == 0 && w.full != "" {
			// Its indexed columns moved: the full form, alone (update).
			n[i], err = t.runWrite(w.full, "", w.args)
		}
		if err := w.done(n[i], err); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// combinedSQL keeps the statement of each sequence of writes already
// combined (a few kinds recur: a finished attempt and its job; a node, a
// new attempt and its job), keyed by their statements.
var combinedSQL sync.Map

// placeholder matches a statement's $n parameters.
var placeholder = regexp.MustCompile(`\$(\d+)`)

// combined returns one statement running every held write's fast form,
// its parameters numbered on from the writes before it, that returns a
// row of each write's changed rows, and the parameters in order.
func combined(held []heldWrite) (string, []any) {
	var k strings.Builder
	size := 0
	for _, w := range held {
		k.WriteString(w.fast)
		k.WriteByte(0)
		size += len(w.args)
	}
	args := make([]any, 0, size)
	for _, w := range held {
		args = append(args, w.args...)
	}
	if q, ok := combinedSQL.Load(k.String()); ok {
		return q.(string), args
	}
	var b strings.Builder
	b.WriteString("WITH ")
	offset := 0
	for i, w := range held {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "w%d AS (%s RETURNING 1)", i, renumber(w.fast, offset))
		offset += len(w.args)
	}
	b.WriteString(" SELECT ")
	for i := range held {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(SELECT COUNT(*) FROM w%d)", i)
	}
	q := b.String()
	combinedSQL.Store(k.String(), q)
	return q, args
}

// renumber moves a statement's parameters $n on by offset.
func renumber(query string, offset int) string {
	if offset == 0 {
		return query
	}
	return placeholder.ReplaceAllStringFunc(query, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		return "$" + strconv.Itoa(n+offset)
	})
}
