package watch

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// Cursor settings: the onset times (a job's submission, a node's
// creation) up to which the conditions have been handled. Written in the
// transaction that records the events, so a restart or a new leader goes
// on from where the last committed pass stopped, never repeating one.
const (
	cursorQueue        = "watch/queued_too_long"
	cursorProvisioning = "watch/provisioning_stuck"
)

// maxBatch bounds the events one pass records for one condition: 10,000
// jobs crossing the threshold at once are recorded over a few passes
// rather than in one long transaction.
const maxBatch = 500

// readCursor returns the cursor named key, zero when none was written.
func readCursor(tx store.Tx, key string) (time.Time, error) {
	v, err := tx.GetSetting(key)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return time.Time{}, nil
	} else if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		// A damaged cursor restarts from the beginning: every condition
		// still met is told once more rather than never.
		return time.Time{}, nil
	}
	return t, nil
}

func writeCursor(tx store.Tx, key string, t time.Time) error {
	return tx.PutSetting(key, t.UTC().Format(time.RFC3339Nano))
}

// onset is a condition's start: what crossed the threshold, and when it
// began.
type onset struct {
	key  string // job "workspace/name", node ID
	at   time.Time
	data any
}

// due returns the onsets in (after, upTo], oldest first, at most maxBatch
// (more when the last ones share their time, so that the cursor never
// splits a time), and the cursor to write after recording them. complete
// says all lists every onset in the window; when it does not (a store
// read cut at a limit), the cursor stops at the last onset listed.
func due(all []onset, after, upTo time.Time, complete bool) ([]onset, time.Time) {
	var in []onset
	for _, o := range all {
		if o.at.After(after) && !o.at.After(upTo) {
			in = append(in, o)
		}
	}
	sortOnsets(in)
	n := min(maxBatch, len(in))
	for n > 0 && n < len(in) && in[n].at.Equal(in[n-1].at) {
		n++
	}
	if n == len(in) && complete {
		return in, upTo
	}
	if n == 0 {
		// Nothing in the window of a list said to be cut: the cursor
		// stays, rather than pass onsets the list left out.
		return nil, after
	}
	return in[:n], in[n-1].at
}

// watchCursor tells, once each, the conditions kept by the cursor key
// whose onset is at or before upTo: onsets lists in a read transaction
// the conditions met now whose onsets are in (after, upTo] (it may list
// others too, which are left out), and says whether it listed all of
// them (complete) or stopped at a limit; record records one in the
// write transaction that moves the cursor past it (reading it again
// there, and recording nothing when it is no longer met). The write
// records nothing when another pass moved the cursor since the read.
func (l *Loop) watchCursor(ctx context.Context, key string, upTo time.Time,
	onsets func(tx store.Tx, after, upTo time.Time) (list []onset, complete bool, err error), record func(tx store.Tx, o onset) error) error {
	var list []onset
	var after time.Time
	complete := true
	err := l.s.Store().View(ctx, func(tx store.Tx) error {
		var err error
		if after, err = readCursor(tx, key); err != nil || !upTo.After(after) {
			return err
		}
		list, complete, err = onsets(tx, after, upTo)
		return err
	})
	if err != nil || !upTo.After(after) {
		return err
	}
	batch, cursor := due(list, after, upTo, complete)
	return l.s.Store().Update(ctx, func(tx store.Tx) error {
		cur, err := readCursor(tx, key)
		if err != nil || !cur.Equal(after) {
			return err
		}
		for _, o := range batch {
			if err := record(tx, o); err != nil {
				return err
			}
		}
		return writeCursor(tx, key, cursor)
	})
}
