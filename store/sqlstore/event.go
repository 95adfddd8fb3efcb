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
// and resource names compare case-insensitively.
func (t *tx) ListEvents(filter core.EventFilter) ([]*core.Event, error) {
	// What this transaction appended is part of what it reads.
	if err := t.log.FlushEvents(); err != nil {
		return nil, fmt.Errorf("store: list events: %w", err)
	}
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
