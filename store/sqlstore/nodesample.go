package sqlstore

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
)

const nodeSampleColumns = `workspace, compute, time, size, tier, preparing, idle, running, leaving, unusable, preempted`

func scanNodeSample(sc scanner) (*node.NodeSample, error) {
	var s node.NodeSample
	var t int64
	if err := sc.Scan(&s.Workspace, &s.Compute, &t, &s.Size, &s.Tier, &s.Preparing, &s.Idle, &s.Running, &s.Leaving, &s.Unusable, &s.Preempted); err != nil {
		return nil, err
	}
	s.Time = fromMicros(t)
	return &s, nil
}

// InsertNodeSample records a compute's node counts; a zero Time takes
// the transaction time. A second sample at the same microsecond replaces
// the first.
func (t *tx) InsertNodeSample(s *node.NodeSample) error {
	if err := t.writable("insert node sample"); err != nil {
		return err
	}
	if s.Time.IsZero() {
		s.Time = t.now
	}
	_, err := t.exec(`INSERT INTO node_samples (workspace_key, compute_key, time, workspace, compute, size, tier, preparing, idle, running, leaving, unusable, preempted)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (workspace_key, compute_key, time) DO UPDATE SET size = excluded.size, tier = excluded.tier,
			preparing = excluded.preparing, idle = excluded.idle, running = excluded.running, leaving = excluded.leaving,
			unusable = excluded.unusable, preempted = excluded.preempted`,
		key(s.Workspace), key(s.Compute), micros(s.Time), s.Workspace, s.Compute, s.Size, s.Tier,
		s.Preparing, s.Idle, s.Running, s.Leaving, s.Unusable, s.Preempted)
	if err != nil {
		return fmt.Errorf("store: insert node sample of %s/%s: %w", s.Workspace, s.Compute, err)
	}
	normTime(&s.Time)
	return nil
}

// ListNodeSamples returns a compute's samples since a time, oldest first,
// led by the last sample before since (its counts held at since).
func (t *tx) ListNodeSamples(workspace, compute string, since time.Time) ([]*node.NodeSample, error) {
	rows, err := t.query(`SELECT `+nodeSampleColumns+` FROM node_samples
		WHERE workspace_key = $1 AND compute_key = $2 AND time >= COALESCE(
			(SELECT MAX(time) FROM node_samples WHERE workspace_key = $1 AND compute_key = $2 AND time <= $3), $3)
		ORDER BY time`, key(workspace), key(compute), micros(since))
	if err != nil {
		return nil, fmt.Errorf("store: list node samples of %s/%s: %w", workspace, compute, err)
	}
	out, err := collect(rows, scanNodeSample)
	if err != nil {
		return nil, fmt.Errorf("store: list node samples of %s/%s: %w", workspace, compute, err)
	}
	return out, nil
}

// DeleteNodeSamplesBefore removes samples older than before, keeping each
// compute's newest sample (its counts still hold).
func (t *tx) DeleteNodeSamplesBefore(before time.Time) (int, error) {
	if err := t.writable("delete node samples"); err != nil {
		return 0, err
	}
	res, err := t.exec(`DELETE FROM node_samples WHERE time < $1 AND time < (
		SELECT MAX(n.time) FROM node_samples n WHERE n.workspace_key = node_samples.workspace_key AND n.compute_key = node_samples.compute_key)`,
		micros(before))
	if err != nil {
		return 0, fmt.Errorf("store: delete node samples: %w", err)
	}
	n, err := affected(res)
	return int(n), err
}

// ListNodeUsage returns the ledger's nodes of a workspace ("" for all)
// alive at some time in [since, until), by creation.
func (t *tx) ListNodeUsage(workspace string, since, until time.Time) ([]*node.NodeUsage, error) {
	q := `SELECT node_id, workspace, compute, size, low_priority, created_on, released_on FROM node_usage
		WHERE created_on < $1 AND (released_on IS NULL OR released_on > $2)`
	args := []any{micros(until), micros(since)}
	if workspace != "" {
		q += ` AND lower(workspace) = $3`
		args = append(args, key(workspace))
	}
	rows, err := t.query(q+` ORDER BY created_on, node_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list node usage: %w", err)
	}
	out, err := collect(rows, func(sc scanner) (*node.NodeUsage, error) {
		var u node.NodeUsage
		var low, created int64
		var released sql.NullInt64
		if err := sc.Scan(&u.NodeID, &u.Workspace, &u.Compute, &u.Size, &low, &created, &released); err != nil {
			return nil, err
		}
		u.LowPriority, u.CreatedOn = low != 0, fromMicros(created)
		if released.Valid {
			r := fromMicros(released.Int64)
			u.ReleasedOn = &r
		}
		return &u, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list node usage: %w", err)
	}
	return out, nil
}
