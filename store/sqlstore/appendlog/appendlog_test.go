package appendlog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store/sqlstore/appendlog"
)

// table is a log table in memory: what a Writer's statements wrote, and
// how many statements that took. The database is PostgreSQL's in
// store/postgres's tests; this checks what the Log asks of it.
type table struct {
	events     []*core.Event
	audit      []*identity.AuditRecord
	statements int
	nextID     int64
	fail       error
}

func (w *table) Events(_ context.Context, events []*core.Event) error {
	return write(w, events, &w.events, func(e *core.Event, id int64) { e.ID = id })
}

func (w *table) Audit(_ context.Context, records []*identity.AuditRecord) error {
	return write(w, records, &w.audit, func(r *identity.AuditRecord, id int64) { r.ID = id })
}

// write is one statement of w's: it appends rows to *log, giving each the
// next ID, or fails with w.fail and writes nothing.
func write[T any](w *table, rows []T, log *[]T, setID func(T, int64)) error {
	w.statements++
	if w.fail != nil {
		return w.fail
	}
	for _, r := range rows {
		w.nextID++
		setID(r, w.nextID)
		*log = append(*log, r)
	}
	return nil
}

// rollback drops what the table holds beyond the sizes it had at a
// savepoint, as the database's rollback to it does.
func (w *table) rollback(events, audit int) {
	w.events, w.audit = w.events[:events], w.audit[:audit]
}

// Rows appended by several Updates are written in one statement per log,
// in the order appended; nothing is written before the flush.
func TestOneStatementPerLog(t *testing.T) {
	w := &table{}
	l := appendlog.New(t.Context(), w)
	var events []*core.Event
	for i := range 10 {
		e := &core.Event{Reason: string(rune('a' + i))}
		events = append(events, e)
		l.AddEvent(e)
		l.AddAudit(&identity.AuditRecord{Detail: e.Reason})
	}
	if w.statements != 0 || l.Pending() != 20 {
		t.Fatalf("before the flush: %d statements, %d pending; want 0 and 20", w.statements, l.Pending())
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.statements != 2 || len(w.events) != 10 || len(w.audit) != 10 || l.Pending() != 0 {
		t.Fatalf("flushed: %d statements, %d events, %d records, %d pending; want 2, 10, 10, 0", w.statements, len(w.events), len(w.audit), l.Pending())
	}
	for i, e := range events {
		if w.events[i] != e || e.ID == 0 || (i > 0 && e.ID <= events[i-1].ID) {
			t.Fatalf("event %d: written %v with ID %d; want in the order appended, IDs ascending", i, w.events[i], e.ID)
		}
	}
	if err := l.Flush(); err != nil || w.statements != 2 {
		t.Fatalf("a second flush with nothing pending: %v, %d statements; want none", err, w.statements)
	}
}

// An Update rolled back to its savepoint takes its rows with it; rows an
// earlier Update appended and the failed one wrote (reading the log) are
// rolled back too, so they wait again and are written at the end.
func TestUndoAfterARollback(t *testing.T) {
	w := &table{}
	l := appendlog.New(t.Context(), w)
	first := &core.Event{Reason: "first update"}
	l.AddEvent(first)

	m := l.Mark() // the second Update's savepoint
	savedEvents, savedAudit := len(w.events), len(w.audit)
	failed := &core.Event{Reason: "second update"}
	l.AddEvent(failed)
	if err := l.FlushEvents(); err != nil { // it read the event log
		t.Fatal(err)
	}
	if first.ID == 0 || failed.ID == 0 {
		t.Fatal("a read of the log must write what waits first")
	}
	l.AddAudit(&identity.AuditRecord{Detail: "second update"})
	w.rollback(savedEvents, savedAudit)
	l.Undo(m)
	if failed.ID != 0 || first.ID != 0 || l.Pending() != 1 {
		t.Fatalf("after the rollback: IDs %d, %d, %d pending; want the rolled-back rows unwritten and the first update's waiting", first.ID, failed.ID, l.Pending())
	}

	third := &core.Event{Reason: "third update"}
	l.AddEvent(third)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(w.events) != 2 || w.events[0] != first || w.events[1] != third || len(w.audit) != 0 {
		t.Fatalf("committed %v and %d audit records; want the first and third updates' events alone", w.events, len(w.audit))
	}
}

// A Log that could not write says so, and keeps the rows waiting.
func TestFlushFailure(t *testing.T) {
	boom := errors.New("disk full")
	w := &table{fail: boom}
	l := appendlog.New(t.Context(), w)
	l.AddEvent(&core.Event{})
	if err := l.Flush(); !errors.Is(err, boom) || l.Pending() != 1 {
		t.Fatalf("Flush = %v with %d pending; want %v and the row still waiting", err, l.Pending(), boom)
	}
}

// A nil Log keeps nothing and writes nothing: the transactions that do
// not defer their rows call it all the same.
func TestNilLog(t *testing.T) {
	var l *appendlog.Log
	l.Undo(l.Mark())
	if err := l.Flush(); err != nil || l.Pending() != 0 {
		t.Fatalf("nil Log: Flush %v, Pending %d", err, l.Pending())
	}
}
