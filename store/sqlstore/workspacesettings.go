package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
)

// A workspace's budgets, vCPU quotas and limits are keyed by the
// lower-cased workspace name (migration 0020 moved them out of settings).
// A budget's creation time is RFC 3339 text, as the settings' JSON held
// it, so that the migration could move it without converting.

// ListBudgets returns a workspace's budgets ordered by Name.
func (t *tx) ListBudgets(ws string) ([]*money.Budget, error) {
	rows, err := t.query(`SELECT scope, period, amount, action, created_on, created_by FROM workspace_budgets
		WHERE workspace_key = $1`, key(ws))
	if err != nil {
		return nil, fmt.Errorf("store: list budgets of %s: %w", ws, err)
	}
	defer rows.Close()
	var out []*money.Budget
	for rows.Next() {
		b := &money.Budget{}
		var created string
		if err := rows.Scan(&b.Scope, &b.Period, &b.Limit, &b.Action, &created, &b.CreatedBy); err != nil {
			return nil, fmt.Errorf("store: list budgets of %s: %w", ws, err)
		}
		if b.CreatedOn, err = time.Parse(time.RFC3339Nano, created); err != nil {
			return nil, fmt.Errorf("store: budget %s of %s: created_on: %w", b.Name(), ws, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list budgets of %s: %w", ws, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// PutBudget adds or replaces a workspace's budget by scope and period.
func (t *tx) PutBudget(ws string, b *money.Budget) error {
	if err := t.writable("put budget"); err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO workspace_budgets (workspace_key, scope, period, amount, action, created_on, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_key, scope, period) DO UPDATE SET amount = excluded.amount, action = excluded.action,
			created_on = excluded.created_on, created_by = excluded.created_by`,
		key(ws), b.Scope, b.Period, b.Limit, b.Action, b.CreatedOn.Format(time.RFC3339Nano), b.CreatedBy); err != nil {
		return fmt.Errorf("store: put budget %s of %s: %w", b.Name(), ws, err)
	}
	return nil
}

// DeleteBudget removes a workspace's budget by Name. Returns ENOTFOUND.
func (t *tx) DeleteBudget(ws, name string) error {
	if err := t.writable("delete budget"); err != nil {
		return err
	}
	// A scope may hold a slash (tag:a/b=c); the period never does.
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return core.Errorf(core.ENOTFOUND, "no budget %q in workspace %s", name, ws)
	}
	res, err := t.exec(`DELETE FROM workspace_budgets WHERE workspace_key = $1 AND scope = $2 AND period = $3`,
		key(ws), name[:i], name[i+1:])
	if err != nil {
		return fmt.Errorf("store: delete budget %s of %s: %w", name, ws, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: delete budget %s of %s: %w", name, ws, err)
	} else if n == 0 {
		return core.Errorf(core.ENOTFOUND, "no budget %q in workspace %s", name, ws)
	}
	return nil
}

// GetWorkspaceQuotas returns a workspace's own limits by lower-cased
// family.
func (t *tx) GetWorkspaceQuotas(ws string) (map[string]int, error) {
	rows, err := t.query(`SELECT family, vcpus FROM workspace_quotas WHERE workspace_key = $1`, key(ws))
	if err != nil {
		return nil, fmt.Errorf("store: quotas of %s: %w", ws, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var fam string
		var n int
		if err := rows.Scan(&fam, &n); err != nil {
			return nil, fmt.Errorf("store: quotas of %s: %w", ws, err)
		}
		out[fam] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: quotas of %s: %w", ws, err)
	}
	return out, nil
}

// PutWorkspaceQuota sets a workspace's own limit of a family.
func (t *tx) PutWorkspaceQuota(ws, family string, vcpus int) error {
	if err := t.writable("put workspace quota"); err != nil {
		return err
	}
	if _, err := t.bumpGen(true); err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO workspace_quotas (workspace_key, family, vcpus) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_key, family) DO UPDATE SET vcpus = excluded.vcpus`,
		key(ws), strings.ToLower(family), vcpus); err != nil {
		return fmt.Errorf("store: put quota %s of %s: %w", family, ws, err)
	}
	return nil
}

// GetWorkspaceLimits returns a workspace's limits, the zero value when it
// has none.
func (t *tx) GetWorkspaceLimits(ws string) (money.WorkspaceLimits, error) {
	var l money.WorkspaceLimits
	err := t.cachedQueryRow("workspace_limits", `SELECT max_log_bytes, storage_quota_bytes FROM workspace_limits WHERE workspace_key = $1`, key(ws)).
		Scan(&l.MaxLogBytes, &l.StorageQuotaBytes)
	if errors.Is(err, sql.ErrNoRows) {
		return money.WorkspaceLimits{}, nil
	} else if err != nil {
		return money.WorkspaceLimits{}, fmt.Errorf("store: limits of %s: %w", ws, err)
	}
	return l, nil
}

// PutWorkspaceLimits replaces a workspace's limits.
func (t *tx) PutWorkspaceLimits(ws string, l money.WorkspaceLimits) error {
	if err := t.writable("put workspace limits"); err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO workspace_limits (workspace_key, max_log_bytes, storage_quota_bytes) VALUES ($1, $2, $3)
		ON CONFLICT (workspace_key) DO UPDATE SET max_log_bytes = excluded.max_log_bytes,
			storage_quota_bytes = excluded.storage_quota_bytes`,
		key(ws), l.MaxLogBytes, l.StorageQuotaBytes); err != nil {
		return fmt.Errorf("store: put limits of %s: %w", ws, err)
	}
	return nil
}
