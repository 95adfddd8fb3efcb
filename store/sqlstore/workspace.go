package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// workspaceColumns are the columns scanWorkspace reads, in order.
const workspaceColumns = `name, location, description, resource_group, created_on`

func scanWorkspace(sc interface{ Scan(...any) error }) (*core.Workspace, error) {
	var ws core.Workspace
	var createdOn int64
	if err := sc.Scan(&ws.Name, &ws.Location, &ws.Description, &ws.ResourceGroup, &createdOn); err != nil {
		return nil, err
	}
	ws.CreatedOn = sqlq.FromMicros(createdOn)
	return &ws, nil
}

// GetWorkspace returns a workspace by name, compared case-insensitively.
// Returns ENOTFOUND.
func (t *tx) GetWorkspace(name string) (*core.Workspace, error) {
	ws, err := scanWorkspace(t.cachedQueryRow("workspaces", `SELECT `+workspaceColumns+` FROM workspaces WHERE name_key = $1`, key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "workspace %q not found", name)
	} else if err != nil {
		return nil, fmt.Errorf("store: get workspace %q: %w", name, err)
	}
	return ws, nil
}

// ListWorkspaces returns all workspaces ordered by lower-cased name.
func (t *tx) ListWorkspaces() ([]*core.Workspace, error) {
	rows, err := t.query(`SELECT ` + workspaceColumns + ` FROM workspaces ORDER BY name_key`)
	if err != nil {
		return nil, fmt.Errorf("store: list workspaces: %w", err)
	}
	defer rows.Close()
	out := []*core.Workspace{}
	for rows.Next() {
		ws, err := scanWorkspace(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list workspaces: %w", err)
		}
		out = append(out, ws)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list workspaces: %w", err)
	}
	return out, nil
}

// InsertWorkspace adds a workspace; a zero CreatedOn takes the transaction
// time. Returns ECONFLICT if a workspace of that name (compared
// case-insensitively) exists.
func (t *tx) InsertWorkspace(ws *core.Workspace) error {
	if err := t.writable("insert workspace"); err != nil {
		return err
	}
	if _, err := t.bumpGen(true); err != nil {
		return err
	}
	if ws.CreatedOn.IsZero() {
		ws.CreatedOn = t.now
	}
	res, err := t.exec(`INSERT INTO workspaces (name_key, name, location, description, resource_group, created_on)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name_key) DO NOTHING`,
		key(ws.Name), ws.Name, ws.Location, ws.Description, ws.ResourceGroup, sqlq.Micros(ws.CreatedOn))
	if err != nil {
		return fmt.Errorf("store: insert workspace %q: %w", ws.Name, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert workspace %q: %w", ws.Name, err)
	}
	if n == 0 {
		return core.Errorf(core.ECONFLICT, "workspace %q already exists", ws.Name)
	}
	ws.CreatedOn = stored(ws.CreatedOn)
	return nil
}

// DeleteWorkspace removes a workspace and its settings: role assignments,
// quotas, limits, budgets, datastores, blobs, batch endpoints, webhooks and their deliveries, so that a workspace created
// again with the name starts afresh (and never inherits another team's
// datastore credentials, sealed to the workspace's name). History (finished jobs, events, the audit log, node
// usage) is kept: cost and audit reports still count it.
func (t *tx) DeleteWorkspace(name string) error {
	if err := t.writable("delete workspace"); err != nil {
		return err
	}
	// Its quotas leave the in-memory views of the placement passes.
	if _, err := t.bumpGen(true); err != nil {
		return err
	}
	k := key(name)
	for _, table := range []string{"role_assignments", "workspace_quotas", "workspace_limits", "workspace_budgets", "datastores", "blobs", "blob_blocks", "batch_endpoints", "batch_deployments", "webhooks", "notify_deliveries", "job_schedules"} {
		if _, err := t.exec(`DELETE FROM `+table+` WHERE workspace_key = $1`, k); err != nil {
			return fmt.Errorf("store: delete workspace %q: %s: %w", name, table, err)
		}
	}
	return t.deleteOne(fmt.Sprintf("workspace %s", name), fmt.Sprintf("workspace %q not found", name),
		`DELETE FROM workspaces WHERE name_key = $1`, k)
}
