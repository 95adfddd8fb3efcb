// Package nodecounts holds the queries that count a compute's nodes: now,
// from the nodes' state, draining, pulling and live columns without
// decoding a node document (current.go), and over time, the samples of a
// compute's counts and the ledger of nodes' lives (node usage), for
// package sqlstore's transactions on both stores.
package nodecounts

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// Counts are the node-counting queries of a transaction.
type Counts struct{ sqlq.Tx }

// New returns the node-counting queries over q, a transaction whose time
// is now; readOnly refuses their writes.
func New(q sqlq.Querier, now time.Time, readOnly bool) Counts {
	return Counts{sqlq.Tx{Q: q, Now: now, ReadOnly: readOnly}}
}

const nodeSampleColumns = `workspace, compute, time, size, tier, preparing, idle, running, leaving, unusable, preempted`

func scanNodeSample(sc sqlq.Scanner) (*node.NodeSample, error) {
	var s node.NodeSample
	var t int64
	if err := sc.Scan(&s.Workspace, &s.Compute, &t, &s.Size, &s.Tier, &s.Preparing, &s.Idle, &s.Running, &s.Leaving, &s.Unusable, &s.Preempted); err != nil {
		return nil, err
	}
	s.Time = sqlq.FromMicros(t)
	return &s, nil
}

// InsertNodeSample records a compute's node counts; a zero Time takes
// the transaction time. A second sample at the same microsecond replaces
// the first.
func (t *Counts) InsertNodeSample(s *node.NodeSample) error {
	if err := t.Writable("insert node sample"); err != nil {
		return err
	}
	if s.Time.IsZero() {
		s.Time = t.Now
	}
	_, err := t.Q.Exec(`INSERT INTO node_samples (workspace_key, compute_key, time, workspace, compute, size, tier, preparing, idle, running, leaving, unusable, preempted)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (workspace_key, compute_key, time) DO UPDATE SET size = excluded.size, tier = excluded.tier,
			preparing = excluded.preparing, idle = excluded.idle, running = excluded.running, leaving = excluded.leaving,
			unusable = excluded.unusable, preempted = excluded.preempted`,
		sqlq.Key(s.Workspace), sqlq.Key(s.Compute), sqlq.Micros(s.Time), s.Workspace, s.Compute, s.Size, s.Tier,
		s.Preparing, s.Idle, s.Running, s.Leaving, s.Unusable, s.Preempted)
	if err != nil {
		return fmt.Errorf("store: insert node sample of %s/%s: %w", s.Workspace, s.Compute, err)
	}
	sqlq.NormTime(&s.Time)
	return nil
}

// ListNodeSamples returns a compute's samples since a time, oldest first,
// led by the last sample before since (its counts held at since).
func (t *Counts) ListNodeSamples(workspace, compute string, since time.Time) ([]*node.NodeSample, error) {
	rows, err := t.Q.Query(`SELECT `+nodeSampleColumns+` FROM node_samples
		WHERE workspace_key = $1 AND compute_key = $2 AND time >= COALESCE(
			(SELECT MAX(time) FROM node_samples WHERE workspace_key = $1 AND compute_key = $2 AND time <= $3), $3)
		ORDER BY time`, sqlq.Key(workspace), sqlq.Key(compute), sqlq.Micros(since))
	if err != nil {
		return nil, fmt.Errorf("store: list node samples of %s/%s: %w", workspace, compute, err)
	}
	out, err := sqlq.Collect(rows, scanNodeSample)
	if err != nil {
		return nil, fmt.Errorf("store: list node samples of %s/%s: %w", workspace, compute, err)
	}
	return out, nil
}

// DeleteNodeSamplesBefore removes samples older than before, keeping each
// compute's newest sample (its counts still hold).
func (t *Counts) DeleteNodeSamplesBefore(before time.Time) (int, error) {
	if err := t.Writable("delete node samples"); err != nil {
		return 0, err
	}
	res, err := t.Q.Exec(`DELETE FROM node_samples WHERE time < $1 AND time < (
		SELECT MAX(n.time) FROM node_samples n WHERE n.workspace_key = node_samples.workspace_key AND n.compute_key = node_samples.compute_key)`,
		sqlq.Micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: delete node samples: %w", err)
	}
	n, err := sqlq.Affected(res)
	return int(n), err
}

// ListNodeUsage returns the ledger's nodes of a workspace ("" for all)
// alive at some time in [since, until), by creation.
func (t *Counts) ListNodeUsage(workspace string, since, until time.Time) ([]*node.NodeUsage, error) {
	q := `SELECT node_id, workspace, compute, size, low_priority, created_on, released_on FROM node_usage
		WHERE created_on < $1 AND (released_on IS NULL OR released_on > $2)`
	args := []any{sqlq.Micros(until), sqlq.Micros(since)}
	if workspace != "" {
		q += ` AND lower(workspace) = $3`
		args = append(args, sqlq.Key(workspace))
	}
	rows, err := t.Q.Query(q+` ORDER BY created_on, node_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list node usage: %w", err)
	}
	out, err := sqlq.Collect(rows, func(sc sqlq.Scanner) (*node.NodeUsage, error) {
		var u node.NodeUsage
		var low, created int64
		var released sql.NullInt64
		if err := sc.Scan(&u.NodeID, &u.Workspace, &u.Compute, &u.Size, &low, &created, &released); err != nil {
			return nil, err
		}
		u.LowPriority, u.CreatedOn = low != 0, sqlq.FromMicros(created)
		if released.Valid {
			r := sqlq.FromMicros(released.Int64)
			u.ReleasedOn = &r
		}
		return &u, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list node usage: %w", err)
	}
	return out, nil
}
