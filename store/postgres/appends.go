package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store/sqlstore/appendlog"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
	"github.com/shoal-ml/shoal/store/sqlstore/txobserve"
)

// eventLogLockKey is the advisory lock a transaction takes as it inserts
// events (the ASCII of "shoalevt"), held until it commits. The notifier
// follows the log by ID (core.EventFilter.AfterID): were IDs committed
// out of the order they were drawn in, a reader could see a later ID,
// move its cursor past it, and never see the earlier one committed after.
// Holding the lock from the draw to the commit makes each transaction's
// IDs visible before the next transaction's are drawn. It is held for the
// last two statements of a write (this insert, the commit), so the
// servers' writes still run side by side until they write events.
const eventLogLockKey int64 = 0x73686f616c657674

// logWriter writes a batch's events and audit records (appendlog) in its
// transaction, each log's rows in one INSERT from arrays: one statement
// text whatever their number, so that pgx prepares it once per
// connection.
type logWriter struct{ tx *sql.Tx }

var _ appendlog.Writer = logWriter{}

// Events inserts events, setting their IDs in the order given.
func (w logWriter) Events(ctx context.Context, events []*core.Event) error {
	n := len(events)
	times := make([]int64, n)
	cols := make([][]string, 6)
	for i := range cols {
		cols[i] = make([]string, n)
	}
	for i, e := range events {
		times[i] = sqlq.Micros(e.Time)
		cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i] = e.Workspace, e.ResourceType, e.ResourceName, e.Kind, e.Actor, e.Reason
	}
	// The event log's lock first (an InitPlan, run once before the
	// first row is formed, and with it before the first ID is drawn),
	// held to the commit: the IDs drawn after it are committed after
	// these.
	ids, err := w.insert(ctx, n, `INSERT INTO events (time, workspace, resource_type, resource_name, kind, actor, reason)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
		WHERE (SELECT true FROM pg_advisory_xact_lock($8)) RETURNING id`,
		times, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], eventLogLockKey)
	if err != nil {
		return fmt.Errorf("store: append %d events: %w", n, err)
	}
	for i, e := range events {
		e.ID = ids[i]
	}
	return nil
}

// Audit inserts records, setting their IDs in the order given.
func (w logWriter) Audit(ctx context.Context, records []*identity.AuditRecord) error {
	n := len(records)
	times := make([]int64, n)
	cols := make([][]string, 7)
	for i := range cols {
		cols[i] = make([]string, n)
	}
	for i, r := range records {
		times[i] = sqlq.Micros(r.Time)
		cols[0][i], cols[1][i], cols[2][i], cols[3][i], cols[4][i], cols[5][i], cols[6][i] = r.PrincipalID, r.Action, r.Target, r.Workspace, r.Source, r.Outcome, r.Detail
	}
	ids, err := w.insert(ctx, n, `INSERT INTO audit_log (time, principal_id, action, target, workspace, source, outcome, detail)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) RETURNING id`,
		times, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6])
	if err != nil {
		return fmt.Errorf("store: append %d audit records: %w", n, err)
	}
	for i, r := range records {
		r.ID = ids[i]
	}
	return nil
}

// insert runs an INSERT … SELECT FROM unnest(…) RETURNING id of n rows
// and returns the IDs in the order of the arrays. unnest yields the rows
// in that order and the identity column draws its values as they are
// inserted, so the IDs ascend in it; RETURNING's order is not promised,
// so they are sorted.
func (w logWriter) insert(ctx context.Context, n int, query string, args ...any) ([]int64, error) {
	txobserve.Statement(ctx)
	rows, err := w.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(ids) != n {
		return nil, fmt.Errorf("inserted %d rows of %d", len(ids), n)
	}
	slices.Sort(ids)
	return ids, nil
}
