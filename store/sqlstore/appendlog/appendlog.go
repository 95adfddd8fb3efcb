// Package appendlog holds the rows the Updates of one batch append to the
// store's logs — events and audit records — until the batch is about to
// commit, and then writes each log's rows in one statement.
//
// On PostgreSQL every statement is a round trip, and the write
// transactions of one server run one after another, so their statements
// bound the job path. Appending an event was the most frequent of them
// (3.8 a job: a submission's, a start's, an end's, a hand-on's). A read of
// the event log adds the matching events that wait to what it read from
// the database (PendingEvents), so that the events are written, and their
// IDs drawn, only as the batch is about to commit (on PostgreSQL under a
// lock held to the commit: see store/postgres); a read of the audit log
// writes what waits first (Log.FlushAudit). The rows are written inside
// the transaction, before its commit, so that they commit or roll back
// with the Updates that appended them, in the order appended, and take
// their IDs in that order.
//
// Who may reach it: only the store's own transactions; nothing here
// is read from a request.
package appendlog

import (
	"context"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// Writer writes rows of the logs in one statement each, setting their
// IDs in the order given.
type Writer interface {
	// Events appends events to the event log.
	Events(ctx context.Context, events []*core.Event) error
	// Audit appends records to the audit log.
	Audit(ctx context.Context, records []*identity.AuditRecord) error
}

// Log is a transaction's pending log rows; a nil Log keeps none (its
// flushes write nothing). It is not safe for concurrent use: the batch's
// Updates run one after another.
type Log struct {
	w   Writer
	ctx context.Context
	// events[:eventsWritten] are in the database (in the transaction);
	// the rest wait. Likewise audit.
	events        []*core.Event
	eventsWritten int
	audit         []*identity.AuditRecord
	auditWritten  int
}

// New returns an empty log that writes with w, its statements run with
// ctx.
func New(ctx context.Context, w Writer) *Log { return &Log{w: w, ctx: ctx} }

// AddEvent keeps e to write before the transaction commits; its ID is set
// then.
func (l *Log) AddEvent(e *core.Event) { l.events = append(l.events, e) }

// AddAudit keeps r to write before the transaction commits; its ID is set
// then.
func (l *Log) AddAudit(r *identity.AuditRecord) { l.audit = append(l.audit, r) }

// Mark is what a log held at a savepoint.
type Mark struct{ events, eventsWritten, audit, auditWritten int }

// Mark returns what l holds now, for Undo after a rollback to a savepoint
// taken now.
func (l *Log) Mark() Mark {
	if l == nil {
		return Mark{}
	}
	return Mark{len(l.events), l.eventsWritten, len(l.audit), l.auditWritten}
}

// Undo forgets what was added since m, after the transaction rolled back
// to the savepoint taken at m: the rows written since (an earlier
// Update's too, written for a read in the failed one) are no longer in the
// database, and wait again to be written.
func (l *Log) Undo(m Mark) {
	if l == nil {
		return
	}
	l.eventsWritten = min(l.eventsWritten, m.eventsWritten)
	for _, e := range l.events[l.eventsWritten:] {
		e.ID = 0 // its row, if written, was rolled back
	}
	clear(l.events[m.events:])
	l.events = l.events[:m.events]
	l.auditWritten = min(l.auditWritten, m.auditWritten)
	for _, r := range l.audit[l.auditWritten:] {
		r.ID = 0
	}
	clear(l.audit[m.audit:])
	l.audit = l.audit[:m.audit]
}

// PendingEvents returns the events that wait to be written, in the order
// appended (their IDs are 0 until they are). The slice is l's: read it
// before the next AddEvent.
func (l *Log) PendingEvents() []*core.Event {
	if l == nil {
		return nil
	}
	return l.events[l.eventsWritten:]
}

// Pending returns how many rows wait to be written.
func (l *Log) Pending() int {
	if l == nil {
		return 0
	}
	return len(l.events) - l.eventsWritten + len(l.audit) - l.auditWritten
}

// FlushEvents writes the events that wait (before the transaction reads
// the event log).
func (l *Log) FlushEvents() error {
	if l == nil || l.eventsWritten == len(l.events) {
		return nil
	}
	if err := l.w.Events(l.ctx, l.events[l.eventsWritten:]); err != nil {
		return err
	}
	l.eventsWritten = len(l.events)
	return nil
}

// FlushAudit writes the audit records that wait (before the transaction
// reads the audit log).
func (l *Log) FlushAudit() error {
	if l == nil || l.auditWritten == len(l.audit) {
		return nil
	}
	if err := l.w.Audit(l.ctx, l.audit[l.auditWritten:]); err != nil {
		return err
	}
	l.auditWritten = len(l.audit)
	return nil
}

// Flush writes everything that waits (before the transaction commits).
func (l *Log) Flush() error {
	if err := l.FlushEvents(); err != nil {
		return err
	}
	return l.FlushAudit()
}
