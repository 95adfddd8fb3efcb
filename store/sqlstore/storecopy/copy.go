// Package storecopy copies a whole Shoal store from one SQL database to
// another (a store move, a backup) and dumps one for comparison: table by
// table, apart from the queries of sqlstore, which work on entities.
package storecopy

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// Tables are the tables of Shoal's schema, parents before children. A
// store's whole state is in them (schema_migrations says which version
// wrote them).
var Tables = []string{
	"batch_endpoints", "batch_deployments", "job_schedules",
	"workspaces", "computes", "events", "api_tokens", "settings", "nodes", "jobs", "attempts",
	"sequences", "users", "identities", "roles", "role_assignments", "audit_log", "signing_keys",
	"service_principals", "node_samples", "node_usage", "instance_live", "workspace_budgets",
	"workspace_quotas", "workspace_limits", "experiments", "run_metrics", "run_metric_totals", "run_params", "run_tags",
	"environments", "registries", "components", "datastores", "data_assets", "models", "codes", "blobs", "blob_blocks",
	"parallel_plans", "parallel_batches", "parallel_files",
	"webhooks", "notify_deliveries", "notify_cursors",
}

// NotCopied are the schema's tables a copy leaves out, and why: every
// table is in Tables or here (a test checks), so that a new one cannot
// be forgotten by a store move or a backup.
var NotCopied = map[string]string{
	"file_chunks":    "the files of a PostgreSQL file store: a backup holds the records, and `admin migrate-store` moves files separately",
	"leader_lease":   "who leads now: the destination's servers elect their own",
	"replicas":       "the servers running now",
	"queue_demand":   "kept by triggers from the jobs copied",
	"wait_reasons":   "the leader's latest scheduler pass: the next pass writes them again",
	"view_gen":       "the destination's own: Copy moves its generation past the copied nodes', and a server's first view reads every node",
	"node_deletions": "deletions a view of the source had yet to read: a view of the destination starts by reading every node",
	"write_gate":     "PostgreSQL's write transactions lock it; it holds no rows",
}

// Endpoint is one side of a copy: a database with Shoal's schema.
type Endpoint struct {
	// DB is the database; Read, when set, is used to read it (SQLite's
	// query-only pool, so that a copy does not hold up the writer).
	DB, Read *sql.DB
	// ReadOptions begin the source's snapshot (REPEATABLE READ on
	// PostgreSQL; any read transaction is one on SQLite in WAL mode).
	ReadOptions *sql.TxOptions
	// Lock, when set, runs first in the destination's transaction.
	Lock func(context.Context, *sql.Tx) error
	// AfterCopy, when set, runs last in the destination's transaction
	// (PostgreSQL moves its identity sequences past the copied IDs).
	AfterCopy func(context.Context, *sql.Tx) error
}

// Stats counts what a copy moved, by table.
type Stats map[string]int

// Copy copies the whole state of src into dst: one consistent snapshot of
// src (which may be serving meanwhile), written in one transaction on dst,
// which must be at the same schema version and hold no state yet. Either
// everything arrives or nothing does.
func Copy(ctx context.Context, src, dst Endpoint) (Stats, error) {
	read := src.Read
	if read == nil {
		read = src.DB
	}
	stx, err := read.BeginTx(ctx, src.ReadOptions)
	if err != nil {
		return nil, fmt.Errorf("read the source: %w", err)
	}
	defer stx.Rollback()
	dtx, err := dst.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("write the destination: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = dtx.Rollback()
		}
	}()
	if dst.Lock != nil {
		if err := dst.Lock(ctx, dtx); err != nil {
			return nil, err
		}
	}
	var sv, dv int64
	if err := stx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&sv); err != nil {
		return nil, fmt.Errorf("the source's schema version: %w", err)
	}
	if err := dtx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&dv); err != nil {
		return nil, fmt.Errorf("the destination's schema version: %w", err)
	}
	if sv != dv {
		return nil, fmt.Errorf("the source's schema is version %d and the destination's %d: open both with the same Shoal first", sv, dv)
	}
	for _, table := range Tables {
		var n int
		if err := dtx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
			return nil, fmt.Errorf("the destination's %s: %w", table, err)
		}
		// A new server creates its workspace, admin user and token on
		// first start: the destination must never have served.
		if n > 0 {
			return nil, fmt.Errorf("the destination is not empty (%s has %d rows): copy only into a store no server has used", table, n)
		}
	}
	stats := Stats{}
	for _, table := range Tables {
		n, err := copyTable(ctx, stx, dtx, table)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", table, err)
		}
		stats[table] = n
	}
	// The copied nodes keep the generations the source gave them: the
	// destination's generation starts past them, or every view would read
	// them again as changed until it caught up.
	if _, err := dtx.ExecContext(ctx, `UPDATE view_gen SET gen = (SELECT COALESCE(MAX(gen), 0) + 1 FROM nodes), computes_gen = (SELECT COALESCE(MAX(gen), 0) + 1 FROM nodes) WHERE id = 1`); err != nil {
		return nil, fmt.Errorf("the destination's view generation: %w", err)
	}
	if dst.AfterCopy != nil {
		if err := dst.AfterCopy(ctx, dtx); err != nil {
			return nil, err
		}
	}
	if err := dtx.Commit(); err != nil {
		return nil, fmt.Errorf("commit the destination: %w", err)
	}
	committed = true
	return stats, nil
}

// copyTable streams one table's rows from src to dst.
func copyTable(ctx context.Context, src, dst *sql.Tx, table string) (int, error) {
	rows, err := src.QueryContext(ctx, `SELECT * FROM `+table)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	marks := make([]string, len(cols))
	for i := range cols {
		marks[i] = fmt.Sprintf("$%d", i+1)
	}
	ins, err := dst.PrepareContext(ctx, `INSERT INTO `+table+` (`+strings.Join(cols, ", ")+`) VALUES (`+strings.Join(marks, ", ")+`)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b) // TEXT in both schemas
			}
		}
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// Dump returns every row of every table as text, sorted, to compare two
// stores row for row.
func Dump(ctx context.Context, db *sql.DB) (map[string][]string, error) {
	out := map[string][]string{}
	for _, table := range Tables {
		rows, err := db.QueryContext(ctx, `SELECT * FROM `+table)
		if err != nil {
			return nil, err
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			parts := make([]string, len(cols))
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				parts[i] = fmt.Sprintf("%s=%v", cols[i], v)
			}
			out[table] = append(out[table], strings.Join(parts, " "))
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
		sort.Strings(out[table])
	}
	return out, nil
}
