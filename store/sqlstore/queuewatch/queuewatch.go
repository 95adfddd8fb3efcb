// Package queuewatch holds the queries that look at the queue without
// reading it whole, for package sqlstore's transactions on both stores:
// each compute's queue in figures (the metrics), and the jobs submitted
// in a window of time (the watcher of jobs queued too long). Both read
// every queued row in the database, and hand the server only what it
// asked for: with 100,000 queued jobs, reading their refs into the server
// for either took some 25 MB of heap for a moment, every 15 s.
package queuewatch

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// querySummaries groups the queued jobs by compute. queue_demand keeps
// the counts, but not the oldest submission, which needs the rows.
const querySummaries = `SELECT workspace_key, compute_key, COUNT(*), SUM(instance_count), MIN(created_on) FROM jobs
	WHERE status = $1 GROUP BY workspace_key, compute_key`

// Summaries returns each compute's queue in figures, sorted by key.
func Summaries(q sqlq.Querier) ([]store.QueueSummary, error) {
	rows, err := q.Query(querySummaries, job.JobQueued)
	if err != nil {
		return nil, fmt.Errorf("store: queue summaries: %w", err)
	}
	defer rows.Close()
	var out []store.QueueSummary
	for rows.Next() {
		var ws, comp string
		var jobs, nodes, oldest int64
		if err := rows.Scan(&ws, &comp, &jobs, &nodes, &oldest); err != nil {
			return nil, fmt.Errorf("store: queue summaries: %w", err)
		}
		out = append(out, store.QueueSummary{Key: ws + "/" + comp, Jobs: int(jobs), Nodes: int(nodes), Oldest: sqlq.FromMicros(oldest)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: queue summaries: %w", err)
	}
	slices.SortFunc(out, func(a, b store.QueueSummary) int { return cmp.Compare(a.Key, b.Key) })
	return out, nil
}

// queryCreated reads the queued jobs submitted in a window, oldest first.
// The order past the time is the Go side's (sortRefs): the stores'
// collations differ.
const queryCreated = `SELECT ` + sqlq.RefColumns + ` FROM jobs
	WHERE status = $1 AND created_on > $2 AND created_on <= $3 ORDER BY created_on LIMIT $4`

// queryCreatedAt reads every queued job submitted at one time.
const queryCreatedAt = `SELECT ` + sqlq.RefColumns + ` FROM jobs WHERE status = $1 AND created_on = $2`

// Created returns the queued jobs submitted in (after, upTo], oldest
// first, at most limit and every job submitted at the last one's time
// (store.Tx.ListQueuedJobsCreated).
func Created(q sqlq.Querier, after, upTo time.Time, limit int) ([]store.QueuedJobRef, error) {
	if limit <= 0 || !upTo.After(after) {
		return nil, nil
	}
	out, err := refs(q, queryCreated, job.JobQueued, sqlq.Micros(after), sqlq.Micros(upTo), int64(limit))
	if err != nil {
		return nil, fmt.Errorf("store: queued jobs created after %s: %w", after.Format(time.RFC3339Nano), err)
	}
	if len(out) == limit {
		// The limit may have cut the jobs of the last time in two: take
		// all of them.
		last := out[len(out)-1].CreatedOn
		for len(out) > 0 && out[len(out)-1].CreatedOn.Equal(last) {
			out = out[:len(out)-1]
		}
		same, err := refs(q, queryCreatedAt, job.JobQueued, sqlq.Micros(last))
		if err != nil {
			return nil, fmt.Errorf("store: queued jobs created at %s: %w", last.Format(time.RFC3339Nano), err)
		}
		out = append(out, same...)
	}
	slices.SortFunc(out, func(a, b store.QueuedJobRef) int {
		if c := a.CreatedOn.Compare(b.CreatedOn); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Workspace, b.Workspace); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out, nil
}

// refs runs a query of sqlq.RefColumns.
func refs(q sqlq.Querier, query string, args ...any) ([]store.QueuedJobRef, error) {
	rows, err := q.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.QueuedJobRef
	var sc sqlq.RefScanner
	for rows.Next() {
		r, err := sc.Scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
