package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/parallel"
)

const batchColumns = `idx, state, try, rank, attempt_id, deadline, failed_tries, items, rows_json, error, failed_items, finished_at`

// PutBatch writes a mini-batch's record, replacing the one of its index.
func PutBatch(db DB, b *parallel.Batch) error {
	rows, err := json.Marshal(nonNil(b.Rows))
	if err != nil {
		return err
	}
	failed, err := json.Marshal(nonNil(b.FailedItems))
	if err != nil {
		return err
	}
	b.Deadline, b.FinishedAt = fromMicros(micros(b.Deadline)), fromMicros(micros(b.FinishedAt))
	if _, err := db.Exec(`INSERT INTO parallel_batches (workspace_key, job, `+batchColumns+`, n_failed)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (workspace_key, job, idx) DO UPDATE SET state = excluded.state, try = excluded.try, rank = excluded.rank,
			attempt_id = excluded.attempt_id, deadline = excluded.deadline, failed_tries = excluded.failed_tries,
			items = excluded.items, rows_json = excluded.rows_json, error = excluded.error,
			failed_items = excluded.failed_items, finished_at = excluded.finished_at, n_failed = excluded.n_failed`,
		key(b.Workspace), b.Job, b.Index, b.State, b.Try, b.Rank, b.AttemptID, micros(b.Deadline), b.FailedTries, b.Items,
		string(rows), b.Error, string(failed), micros(b.FinishedAt), len(b.FailedItems)); err != nil {
		return fmt.Errorf("store: put mini-batch %d of %s/%s: %w", b.Index, b.Workspace, b.Job, err)
	}
	return nil
}

func scanBatch(workspace, job string) func(interface{ Scan(...any) error }) (*parallel.Batch, error) {
	return func(sc interface{ Scan(...any) error }) (*parallel.Batch, error) {
		b := parallel.Batch{Workspace: key(workspace), Job: job}
		var deadline, finished int64
		var rows, failed string
		if err := sc.Scan(&b.Index, &b.State, &b.Try, &b.Rank, &b.AttemptID, &deadline, &b.FailedTries, &b.Items,
			&rows, &b.Error, &failed, &finished); err != nil {
			return nil, err
		}
		b.Deadline, b.FinishedAt = fromMicros(deadline), fromMicros(finished)
		if err := json.Unmarshal([]byte(rows), &b.Rows); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(failed), &b.FailedItems); err != nil {
			return nil, err
		}
		if len(b.Rows) == 0 {
			b.Rows = nil
		}
		if len(b.FailedItems) == 0 {
			b.FailedItems = nil
		}
		return &b, nil
	}
}

// GetBatch returns one mini-batch's record, or ENOTFOUND.
func GetBatch(db DB, workspace, job string, index int) (*parallel.Batch, error) {
	b, err := scanBatch(workspace, job)(db.QueryRow(`SELECT `+batchColumns+` FROM parallel_batches
		WHERE workspace_key = $1 AND job = $2 AND idx = $3`, key(workspace), job, index))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "mini-batch %d of job %s was never leased", index, job)
	} else if err != nil {
		return nil, fmt.Errorf("store: mini-batch %d of %s/%s: %w", index, workspace, job, err)
	}
	return b, nil
}

// ListBatches returns records in state (any: ""), by index from from on,
// at most limit (0: all).
func ListBatches(db DB, workspace, job, state string, from, limit int) ([]*parallel.Batch, error) {
	q := `SELECT ` + batchColumns + ` FROM parallel_batches WHERE workspace_key = $1 AND job = $2 AND idx >= $3`
	args := []any{key(workspace), job, from}
	if state != "" {
		q += ` AND state = $4`
		args = append(args, state)
	}
	q += ` ORDER BY idx`
	if limit > 0 {
		// A parameter, not the number, so that every limit shares one
		// cached statement.
		args = append(args, limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: mini-batches of %s/%s: %w", workspace, job, err)
	}
	defer rows.Close()
	out := []*parallel.Batch{}
	scan := scanBatch(workspace, job)
	for rows.Next() {
		b, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("store: mini-batches of %s/%s: %w", workspace, job, err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// CountBatches sums a job's records by state; DoneSince counts those done
// at or after since.
func CountBatches(db DB, workspace, job string, since time.Time) (parallel.Counts, error) {
	var c parallel.Counts
	rows, err := db.Query(`SELECT state, COUNT(*), COALESCE(SUM(failed_tries), 0), COALESCE(SUM(n_failed), 0),
		COALESCE(SUM(CASE WHEN finished_at >= $3 AND state = 'done' THEN 1 ELSE 0 END), 0)
		FROM parallel_batches WHERE workspace_key = $1 AND job = $2 GROUP BY state`, key(workspace), job, micros(since))
	if err != nil {
		return c, fmt.Errorf("store: count mini-batches of %s/%s: %w", workspace, job, err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var n, tries, failed, since int
		if err := rows.Scan(&state, &n, &tries, &failed, &since); err != nil {
			return c, fmt.Errorf("store: count mini-batches of %s/%s: %w", workspace, job, err)
		}
		switch state {
		case parallel.BatchPending:
			c.Pending += n
		case parallel.BatchLeased:
			c.Leased += n
		case parallel.BatchDone:
			c.Done += n
		case parallel.BatchFailed:
			c.Failed += n
		}
		c.FailedItems += failed
		c.DoneSince += since
		// A failed mini-batch's last failed try was not given again.
		c.Retried += tries
		if state == parallel.BatchFailed {
			c.Retried -= n
		}
	}
	return c, rows.Err()
}

// InsertFiles records a posted file set and sets its Seq.
func InsertFiles(db DB, f *parallel.FilePost) error {
	f.PostedAt = fromMicros(micros(f.PostedAt))
	if err := db.QueryRow(`INSERT INTO parallel_files (workspace_key, job, rank, attempt_id, artifact, posted_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, key(f.Workspace), f.Job, f.Rank, f.AttemptID, f.Artifact, micros(f.PostedAt)).Scan(&f.Seq); err != nil {
		return fmt.Errorf("store: insert parallel files of %s/%s: %w", f.Workspace, f.Job, err)
	}
	return nil
}

// ListFiles returns a job's posted file sets by Seq.
func ListFiles(db DB, workspace, job string) ([]*parallel.FilePost, error) {
	rows, err := db.Query(`SELECT id, rank, attempt_id, artifact, posted_at FROM parallel_files
		WHERE workspace_key = $1 AND job = $2 ORDER BY id`, key(workspace), job)
	if err != nil {
		return nil, fmt.Errorf("store: parallel files of %s/%s: %w", workspace, job, err)
	}
	defer rows.Close()
	out := []*parallel.FilePost{}
	for rows.Next() {
		f := parallel.FilePost{Workspace: key(workspace), Job: job}
		var posted int64
		if err := rows.Scan(&f.Seq, &f.Rank, &f.AttemptID, &f.Artifact, &posted); err != nil {
			return nil, fmt.Errorf("store: parallel files of %s/%s: %w", workspace, job, err)
		}
		f.PostedAt = fromMicros(posted)
		out = append(out, &f)
	}
	return out, rows.Err()
}
