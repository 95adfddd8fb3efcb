package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
)

// waitReasonBatch is how many reasons one INSERT writes: a leader taking
// over a long queue writes thousands, and a statement per row costs a
// round trip each on PostgreSQL. Two statements only (a full batch and a
// single row) keep the statement cache small.
const waitReasonBatch = 64

// waitReasonUpsert is the INSERT of n reasons.
func waitReasonUpsert(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO wait_reasons (workspace_key, workspace, job, code, message) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d)", 5*i+1, 5*i+2, 5*i+3, 5*i+4, 5*i+5)
	}
	b.WriteString(` ON CONFLICT (workspace_key, job) DO UPDATE SET workspace = excluded.workspace,
		code = excluded.code, message = excluded.message`)
	return b.String()
}

var (
	queryPutWaitReasons = waitReasonUpsert(waitReasonBatch)
	queryPutWaitReason  = waitReasonUpsert(1)
)

// GetWaitReason returns a job's wait reason. Returns ENOTFOUND.
func (t *tx) GetWaitReason(workspace, job string) (*jobkind.WaitReason, error) {
	r := &jobkind.WaitReason{}
	err := t.queryRow(`SELECT workspace, job, code, message FROM wait_reasons WHERE workspace_key = $1 AND job = $2`,
		key(workspace), job).Scan(&r.Workspace, &r.Job, &r.Code, &r.Message)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "no wait reason of job %s/%s", workspace, job)
	} else if err != nil {
		return nil, fmt.Errorf("store: get wait reason of %s/%s: %w", workspace, job, err)
	}
	return r, nil
}

// ListWaitReasons returns the wait reasons of a workspace's jobs ("" for
// all), ordered by workspace and job.
func (t *tx) ListWaitReasons(workspace string) ([]*jobkind.WaitReason, error) {
	q, args := `SELECT workspace, job, code, message FROM wait_reasons ORDER BY workspace_key, job`, []any(nil)
	if workspace != "" {
		q, args = `SELECT workspace, job, code, message FROM wait_reasons WHERE workspace_key = $1 ORDER BY job`, []any{key(workspace)}
	}
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list wait reasons: %w", err)
	}
	defer rows.Close()
	var out []*jobkind.WaitReason
	for rows.Next() {
		r := &jobkind.WaitReason{}
		if err := rows.Scan(&r.Workspace, &r.Job, &r.Code, &r.Message); err != nil {
			return nil, fmt.Errorf("store: list wait reasons: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list wait reasons: %w", err)
	}
	return out, nil
}

// PutWaitReasons adds or replaces reasons, waitReasonBatch to a statement.
func (t *tx) PutWaitReasons(rs []*jobkind.WaitReason) error {
	if err := t.writable("put wait reasons"); err != nil {
		return err
	}
	args := func(rs []*jobkind.WaitReason) []any {
		out := make([]any, 0, 5*len(rs))
		for _, r := range rs {
			out = append(out, key(r.Workspace), r.Workspace, r.Job, r.Code, r.Message)
		}
		return out
	}
	for len(rs) > 0 {
		q, n := queryPutWaitReasons, waitReasonBatch
		if len(rs) < waitReasonBatch {
			q, n = queryPutWaitReason, 1
		}
		if _, err := t.exec(q, args(rs[:n])...); err != nil {
			return fmt.Errorf("store: put wait reason of %s/%s: %w", rs[0].Workspace, rs[0].Job, err)
		}
		rs = rs[n:]
	}
	return nil
}

// DeleteWaitReason removes a job's wait reason.
func (t *tx) DeleteWaitReason(workspace, job string) error {
	if err := t.writable("delete wait reason"); err != nil {
		return err
	}
	if _, err := t.exec(`DELETE FROM wait_reasons WHERE workspace_key = $1 AND job = $2`, key(workspace), job); err != nil {
		return fmt.Errorf("store: delete wait reason of %s/%s: %w", workspace, job, err)
	}
	return nil
}
