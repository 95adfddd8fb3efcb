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

// waitReasonBatch is how many reasons one statement writes or deletes at
// most: a leader taking over a long queue writes thousands, and a pass
// that places jobs deletes theirs, and a statement per row costs a round
// trip each on PostgreSQL. Fewer are written in statements of a power of
// two each (a pass deleting 30 reasons: 16, 8, 4, 2), so that the
// statement cache holds seven statements of each kind.
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

// waitReasonDelete is the DELETE of n jobs' reasons (a row-value IN, which
// both stores run on the primary key).
func waitReasonDelete(n int) string {
	var b strings.Builder
	b.WriteString(`DELETE FROM wait_reasons WHERE (workspace_key, job) IN (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "($%d, $%d)", 2*i+1, 2*i+2)
	}
	b.WriteString(`)`)
	return b.String()
}

// sized holds a statement for each power of two up to waitReasonBatch.
type sized map[int]string

// sizes returns the statements build makes for 1, 2, 4 … waitReasonBatch rows.
func sizes(build func(n int) string) sized {
	out := sized{}
	for n := 1; n <= waitReasonBatch; n *= 2 {
		out[n] = build(n)
	}
	return out
}

// next returns the statement for the first rows of a run of left and how
// many rows it takes: the largest power of two not over left.
func (s sized) next(left int) (string, int) {
	n := waitReasonBatch
	for n > left {
		n /= 2
	}
	return s[n], n
}

var (
	queryPutWaitReasons    = sizes(waitReasonUpsert)
	queryDeleteWaitReasons = sizes(waitReasonDelete)
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

// Put adds or replaces reasons, up to waitReasonBatch to a statement.
func Put(q sqlq.Querier, rs []*jobkind.WaitReason) error {
	for len(rs) > 0 {
		query, n := queryPutWaitReasons.next(len(rs))
		args := make([]any, 0, 5*n)
		for _, r := range rs[:n] {
			args = append(args, sqlq.Key(r.Workspace), r.Workspace, r.Job, r.Code, r.Message)
		}
		if _, err := q.Exec(query, args...); err != nil {
			return fmt.Errorf("store: put wait reason of %s/%s: %w", rs[0].Workspace, rs[0].Job, err)
		}
		rs = rs[n:]
	}
	return nil
}

// Delete removes the reasons of the jobs rs name (their Workspace and
// Job), up to waitReasonBatch to a statement; a job without one is no
// error.
func Delete(q sqlq.Querier, rs []*jobkind.WaitReason) error {
	for len(rs) > 0 {
		query, n := queryDeleteWaitReasons.next(len(rs))
		args := make([]any, 0, 2*n)
		for _, r := range rs[:n] {
			args = append(args, sqlq.Key(r.Workspace), r.Job)
		}
		if _, err := q.Exec(query, args...); err != nil {
			return fmt.Errorf("store: delete wait reason of %s/%s: %w", rs[0].Workspace, rs[0].Job, err)
		}
		rs = rs[n:]
	}
	return nil
}
