package sqlstore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// AppendEvent adds e and sets e.ID, at once or, in a batch that defers
// its log rows (Within's log), when the batch writes them before it
// commits; a zero e.Time takes the transaction time.
func (t *tx) AppendEvent(e *core.Event) error {
	if err := t.writable("append event"); err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = t.now
	}
	if t.log != nil {
		e.Time = stored(e.Time)
		t.log.AddEvent(e)
		return nil
	}
	var id int64
	err := t.queryRow(`INSERT INTO events (time, workspace, resource_type, resource_name, kind, actor, reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		sqlq.Micros(e.Time), e.Workspace, e.ResourceType, e.ResourceName, e.Kind, e.Actor, e.Reason).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: append %s event of %s %s/%s: %w", e.Kind, e.ResourceType, e.Workspace, e.ResourceName, err)
	}
	e.ID = id
	e.Time = stored(e.Time)
	return nil
}

// ListEvents returns the events matching filter, by ascending ID. Workspace
// and resource names compare case-insensitively. What this transaction
// appended is part of what it reads, after the stored events, with no ID
// yet in a batch that defers its log rows (Within's log): they are not
// written for the read. Written in the middle of the transaction, they
// would draw their IDs then, above the IDs another server commits after
// this transaction's snapshot, and a reader following the log by ID in
// it (AfterID) would move past those IDs, never to see them; and on
// PostgreSQL the event log's lock would be held from then to the commit.
// A read that follows the log (Following, AfterID) gets no unwritten
// events: it reads them once they are committed, with their IDs.
func (t *tx) ListEvents(filter core.EventFilter) ([]*core.Event, error) {
	out, err := t.listStoredEvents(filter)
	if err != nil || filter.Following || filter.AfterID > 0 {
		return out, err
	}
	for _, e := range t.log.PendingEvents() {
		if filter.Limit > 0 && len(out) >= filter.Limit {
			break
		}
		if eventMatches(e, filter) {
			c := *e
			out = append(out, &c)
		}
	}
	return out, nil
}

// eventMatches says whether an event not yet written matches filter, as
// listStoredEvents's query would.
func eventMatches(e *core.Event, f core.EventFilter) bool {
	return (f.Workspace == "" || strings.EqualFold(e.Workspace, f.Workspace)) &&
		(f.ResourceType == "" || e.ResourceType == f.ResourceType) &&
		(f.ResourceName == "" || strings.EqualFold(e.ResourceName, f.ResourceName)) &&
		(f.Since.IsZero() || !stored(e.Time).Before(stored(f.Since)))
}

// listStoredEvents returns the stored events matching filter, by
// ascending ID.
func (t *tx) listStoredEvents(filter core.EventFilter) ([]*core.Event, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if filter.Workspace != "" {
		add(`lower(workspace) = lower(?)`, filter.Workspace)
	}
	if filter.ResourceType != "" {
		add(`resource_type = ?`, filter.ResourceType)
	}
	if filter.ResourceName != "" {
		add(`lower(resource_name) = lower(?)`, filter.ResourceName)
	}
	if filter.AfterID > 0 {
		add(`id > ?`, filter.AfterID)
	}
	if !filter.Since.IsZero() {
		add(`time >= ?`, sqlq.Micros(filter.Since))
	}
	q := `SELECT id, time, workspace, resource_type, resource_name, kind, actor, reason FROM events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY id`
	if filter.Limit > 0 {
		args = append(args, int64(filter.Limit))
		q += ` LIMIT $` + strconv.Itoa(len(args))
	}
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list events: %w", err)
	}
	defer rows.Close()
	out := []*core.Event{}
	for rows.Next() {
		var e core.Event
		var at int64
		if err := rows.Scan(&e.ID, &at, &e.Workspace, &e.ResourceType, &e.ResourceName, &e.Kind, &e.Actor, &e.Reason); err != nil {
			return nil, fmt.Errorf("store: list events: %w", err)
		}
		e.Time = sqlq.FromMicros(at)
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list events: %w", err)
	}
	return out, nil
}
