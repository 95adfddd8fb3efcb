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
// splits a time), and the cursor to write after recording them.
func due(all []onset, after, upTo time.Time) ([]onset, time.Time) {
	var in []onset
	for _, o := range all {
		if o.at.After(after) && !o.at.After(upTo) {
			in = append(in, o)
		}
	}
	sortOnsets(in)
	if len(in) <= maxBatch {
		return in, upTo
	}
	n := maxBatch
	for n < len(in) && in[n].at.Equal(in[n-1].at) {
		n++
	}
	if n == len(in) {
		return in, upTo
	}
	return in[:n], in[n-1].at
}

// watchCursor tells, once each, the conditions kept by the cursor key
// whose onset is at or before upTo: onsets lists in a read transaction
// the conditions met now, with their onsets; record records one in the
// write transaction that moves the cursor past it (reading it again
// there, and recording nothing when it is no longer met). The write
// records nothing when another pass moved the cursor since the read.
func (l *Loop) watchCursor(ctx context.Context, key string, upTo time.Time,
	onsets func(tx store.Tx) ([]onset, error), record func(tx store.Tx, o onset) error) error {
	var list []onset
	var after time.Time
	err := l.s.Store().View(ctx, func(tx store.Tx) error {
		var err error
		if after, err = readCursor(tx, key); err != nil {
			return err
		}
		list, err = onsets(tx)
		return err
	})
	if err != nil || !upTo.After(after) {
		return err
	}
	batch, cursor := due(list, after, upTo)
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
