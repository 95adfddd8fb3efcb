// Package waitstore holds the queries of jobs' wait reasons (why a queued
// job waits), for package sqlstore's transactions on both stores.
package waitstore

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
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

// Get returns a job's wait reason. Returns ENOTFOUND.
func Get(q sqlq.Querier, workspace, job string) (*jobkind.WaitReason, error) {
	r := &jobkind.WaitReason{}
	err := q.QueryRow(`SELECT workspace, job, code, message FROM wait_reasons WHERE workspace_key = $1 AND job = $2`,
		sqlq.Key(workspace), job).Scan(&r.Workspace, &r.Job, &r.Code, &r.Message)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "no wait reason of job %s/%s", workspace, job)
	} else if err != nil {
		return nil, fmt.Errorf("store: get wait reason of %s/%s: %w", workspace, job, err)
	}
	return r, nil
}

// List returns the wait reasons of a workspace's jobs ("" for
// all), ordered by workspace and job.
func List(q sqlq.Querier, workspace string) ([]*jobkind.WaitReason, error) {
	query, args := `SELECT workspace, job, code, message FROM wait_reasons ORDER BY workspace_key, job`, []any(nil)
	if workspace != "" {
		query, args = `SELECT workspace, job, code, message FROM wait_reasons WHERE workspace_key = $1 ORDER BY job`, []any{sqlq.Key(workspace)}
	}
	rows, err := q.Query(query, args...)
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

// Put adds or replaces reasons, waitReasonBatch to a statement.
func Put(q sqlq.Querier, rs []*jobkind.WaitReason) error {
	args := func(rs []*jobkind.WaitReason) []any {
		out := make([]any, 0, 5*len(rs))
		for _, r := range rs {
			out = append(out, sqlq.Key(r.Workspace), r.Workspace, r.Job, r.Code, r.Message)
		}
		return out
	}
	for len(rs) > 0 {
		query, n := queryPutWaitReasons, waitReasonBatch
		if len(rs) < waitReasonBatch {
			query, n = queryPutWaitReason, 1
		}
		if _, err := q.Exec(query, args(rs[:n])...); err != nil {
			return fmt.Errorf("store: put wait reason of %s/%s: %w", rs[0].Workspace, rs[0].Job, err)
		}
		rs = rs[n:]
	}
	return nil
}

// Delete removes a job's wait reason.
func Delete(q sqlq.Querier, workspace, job string) error {
	if _, err := q.Exec(`DELETE FROM wait_reasons WHERE workspace_key = $1 AND job = $2`, sqlq.Key(workspace), job); err != nil {
		return fmt.Errorf("store: delete wait reason of %s/%s: %w", workspace, job, err)
	}
	return nil
}
