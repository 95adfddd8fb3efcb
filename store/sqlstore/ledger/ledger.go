// Package ledger holds the SQL of parallel jobs' ledgers (migration
// 0035; domain/parallel): sqlstore's transactions delegate to it, so that
// the queries of one concern stay out of sqlstore's big package. It runs
// the same SQL on SQLite and PostgreSQL, as sqlstore does.
package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/parallel"
)

// DB is what a transaction gives the queries: sqlstore's tx, with its
// statement cache.
type DB interface {
	Exec(query string, args ...any) (sql.Result, error)
	Query(query string, args ...any) (*sql.Rows, error)
	QueryRow(query string, args ...any) *sql.Row
}

func key(s string) string { return strings.ToLower(s) }

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}

// GetPlan returns a job's plan without its descriptions, or ENOTFOUND.
func GetPlan(db DB, workspace, job string) (*parallel.Plan, error) {
	p := parallel.Plan{Workspace: key(workspace), Job: job}
	var created int64
	err := db.QueryRow(`SELECT kind, items, mini_batches, fingerprint, next_fresh, aborted, created_at
		FROM parallel_plans WHERE workspace_key = $1 AND job = $2`, key(workspace), job).
		Scan(&p.Kind, &p.Items, &p.MiniBatches, &p.Fingerprint, &p.NextFresh, &p.Aborted, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noPlan(job)
	} else if err != nil {
		return nil, fmt.Errorf("store: parallel plan of %s/%s: %w", workspace, job, err)
	}
	p.CreatedAt = fromMicros(created)
	return &p, nil
}

func noPlan(job string) error {
	return core.Errorf(core.ENOTFOUND, "job %s has no parallel plan", job)
}

// Description returns the plan's description of one mini-batch ("" when
// none), or ENOTFOUND without a plan.
func Description(db DB, workspace, job string, index int) (string, error) {
	var describe string
	err := db.QueryRow(`SELECT describe FROM parallel_plans WHERE workspace_key = $1 AND job = $2`, key(workspace), job).Scan(&describe)
	if errors.Is(err, sql.ErrNoRows) {
		return "", noPlan(job)
	} else if err != nil {
		return "", fmt.Errorf("store: parallel plan of %s/%s: %w", workspace, job, err)
	}
	var all []string
	if err := json.Unmarshal([]byte(describe), &all); err != nil {
		return "", fmt.Errorf("store: parallel plan of %s/%s: describe: %w", workspace, job, err)
	}
	if index < 0 || index >= len(all) {
		return "", nil
	}
	return all[index], nil
}

// InsertPlan records a plan, or returns ECONFLICT.
func InsertPlan(db DB, p *parallel.Plan, now time.Time) error {
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now
	}
	p.CreatedAt = fromMicros(micros(p.CreatedAt))
	describe, err := json.Marshal(nonNil(p.Describe))
	if err != nil {
		return err
	}
	res, err := db.Exec(`INSERT INTO parallel_plans (workspace_key, job, kind, items, mini_batches, fingerprint, describe, next_fresh, aborted, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (workspace_key, job) DO NOTHING`,
		key(p.Workspace), p.Job, p.Kind, p.Items, p.MiniBatches, p.Fingerprint, string(describe), p.NextFresh, p.Aborted, micros(p.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: insert parallel plan of %s/%s: %w", p.Workspace, p.Job, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return core.Errorf(core.ECONFLICT, "job %s has a parallel plan already", p.Job)
	}
	return nil
}

// UpdatePlan writes a plan's NextFresh and Aborted, or returns ENOTFOUND.
func UpdatePlan(db DB, p *parallel.Plan) error {
	res, err := db.Exec(`UPDATE parallel_plans SET next_fresh = $3, aborted = $4 WHERE workspace_key = $1 AND job = $2`,
		key(p.Workspace), p.Job, p.NextFresh, p.Aborted)
	if err != nil {
		return fmt.Errorf("store: update parallel plan of %s/%s: %w", p.Workspace, p.Job, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return noPlan(p.Job)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// DeleteLedger removes a job's plan, mini-batches and file records.
func DeleteLedger(db DB, workspace, job string) error {
	for _, table := range []string{"parallel_plans", "parallel_batches", "parallel_files"} {
		if _, err := db.Exec(`DELETE FROM `+table+` WHERE workspace_key = $1 AND job = $2`, key(workspace), job); err != nil {
			return fmt.Errorf("store: delete %s of %s/%s: %w", table, workspace, job, err)
		}
	}
	return nil
}
