package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store/sqlstore/entitydoc"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// computeColumns are the columns scanCompute reads, in order.
const computeColumns = `workspace, name, type, version, provisioning_state, provisioning_errors, spec, created_on, modified_on, created_by, instance`

// scanCompute reads a row of computeColumns.
func scanCompute(sc interface{ Scan(...any) error }) (*compute.Compute, error) {
	var (
		c                     compute.Compute
		name, typ             string
		spec, errs, instance  string
		createdOn, modifiedOn int64
	)
	if err := sc.Scan(&c.Workspace, &name, &typ, &c.Version, &c.ProvisioningState, &errs, &spec,
		&createdOn, &modifiedOn, &c.CreatedBy, &instance); err != nil {
		return nil, err
	}
	if instance != "" {
		c.Instance = &compute.InstanceStatus{}
		if err := json.Unmarshal([]byte(instance), c.Instance); err != nil {
			return nil, fmt.Errorf("decode instance state of compute %q: %w", name, err)
		}
	}
	if err := json.Unmarshal([]byte(spec), &c.ComputeSpec); err != nil {
		return nil, fmt.Errorf("decode spec of compute %q: %w", name, err)
	}
	if err := json.Unmarshal([]byte(errs), &c.ProvisioningErrors); err != nil {
		return nil, fmt.Errorf("decode provisioning errors of compute %q: %w", name, err)
	}
	if c.ProvisioningErrors == nil {
		c.ProvisioningErrors = []compute.ProvisioningError{}
	}
	c.Name, c.Type = name, typ
	c.ETag = compute.ETag(c.Version)
	c.CreatedOn, c.ModifiedOn = sqlq.FromMicros(createdOn), sqlq.FromMicros(modifiedOn)
	return &c, nil
}

// GetCompute returns a compute by workspace and name, both compared
// case-insensitively. Returns ENOTFOUND.
func (t *tx) GetCompute(workspace, name string) (*compute.Compute, error) {
	row := t.cachedQueryRow("computes", `SELECT `+computeColumns+` FROM computes WHERE workspace_key = $1 AND name_key = $2`,
		key(workspace), key(name))
	c, err := scanCompute(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "compute %q not found in workspace %q", name, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: get compute %s/%s: %w", workspace, name, err)
	}
	return c, nil
}

// ListComputes returns the computes of filter.Workspace, or of every
// workspace (AllWorkspaces), and of filter.Type when set, ordered by
// lower-cased workspace and name.
func (t *tx) ListComputes(filter compute.ComputeFilter) ([]*compute.Compute, error) {
	// Two query shapes rather than one with an OR, so that the one
	// workspace's listing keeps using the workspace's index.
	q := `SELECT ` + computeColumns + ` FROM computes WHERE workspace_key = $1`
	args := []any{key(filter.Workspace)}
	if filter.AllWorkspaces {
		q, args = `SELECT `+computeColumns+` FROM computes WHERE $1 = ''`, []any{""}
	}
	if filter.Type != "" {
		q += ` AND type = $2`
		args = append(args, filter.Type)
	}
	q += ` ORDER BY workspace_key, name_key`
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list computes of %q: %w", filter.Workspace, err)
	}
	defer rows.Close()
	out := []*compute.Compute{}
	for rows.Next() {
		c, err := scanCompute(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list computes of %q: %w", filter.Workspace, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list computes of %q: %w", filter.Workspace, err)
	}
	return out, nil
}

// InsertCompute stores c as written (ID, ResourceID and the status fields are
// not stored) and sets c.ETag. Zero CreatedOn and ModifiedOn take the
// transaction time. Returns ECONFLICT if the workspace has a compute of that
// name, compared case-insensitively.
func (t *tx) InsertCompute(c *compute.Compute) error {
	if err := t.writable("insert compute"); err != nil {
		return err
	}
	if _, err := t.bumpGen(true); err != nil {
		return err
	}
	if c.CreatedOn.IsZero() {
		c.CreatedOn = t.now
	}
	if c.ModifiedOn.IsZero() {
		c.ModifiedOn = c.CreatedOn
	}
	r, err := entitydoc.EncodeCompute(c)
	if err != nil {
		return fmt.Errorf("store: insert compute %s/%s: %w", c.Workspace, c.Name, err)
	}
	res, err := t.exec(`INSERT INTO computes (workspace_key, name_key, workspace, name, type, version,
			provisioning_state, provisioning_errors, spec, created_on, modified_on, created_by, instance)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (workspace_key, name_key) DO NOTHING`,
		key(c.Workspace), key(c.Name), c.Workspace, c.Name, c.Type, c.Version,
		c.ProvisioningState, r.Errors, r.Spec, sqlq.Micros(c.CreatedOn), sqlq.Micros(c.ModifiedOn), c.CreatedBy, r.Instance)
	if err != nil {
		return fmt.Errorf("store: insert compute %s/%s: %w", c.Workspace, c.Name, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert compute %s/%s: %w", c.Workspace, c.Name, err)
	}
	if n == 0 {
		return core.Errorf(core.ECONFLICT, "compute %q already exists in workspace %q", c.Name, c.Workspace)
	}
	c.CreatedOn, c.ModifiedOn = stored(c.CreatedOn), stored(c.ModifiedOn)
	c.ETag = compute.ETag(c.Version)
	return nil
}

// UpdateCompute replaces the stored compute of c's workspace and name with c
// as written (the caller bumps Version and ModifiedOn) and sets c.ETag.
// Returns ENOTFOUND.
func (t *tx) UpdateCompute(c *compute.Compute) error {
	if err := t.writable("update compute"); err != nil {
		return err
	}
	if _, err := t.bumpGen(true); err != nil {
		return err
	}
	r, err := entitydoc.EncodeCompute(c)
	if err != nil {
		return fmt.Errorf("store: update compute %s/%s: %w", c.Workspace, c.Name, err)
	}
	res, err := t.exec(`UPDATE computes SET workspace = $3, name = $4, type = $5, version = $6,
			provisioning_state = $7, provisioning_errors = $8, spec = $9,
			created_on = $10, modified_on = $11, created_by = $12, instance = $13
		WHERE workspace_key = $1 AND name_key = $2`,
		key(c.Workspace), key(c.Name), c.Workspace, c.Name, c.Type, c.Version,
		c.ProvisioningState, r.Errors, r.Spec, sqlq.Micros(c.CreatedOn), sqlq.Micros(c.ModifiedOn), c.CreatedBy, r.Instance)
	if err != nil {
		return fmt.Errorf("store: update compute %s/%s: %w", c.Workspace, c.Name, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: update compute %s/%s: %w", c.Workspace, c.Name, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "compute %q not found in workspace %q", c.Name, c.Workspace)
	}
	c.CreatedOn, c.ModifiedOn = stored(c.CreatedOn), stored(c.ModifiedOn)
	c.ETag = compute.ETag(c.Version)
	return nil
}

// DeleteCompute removes a compute. Returns ENOTFOUND.
func (t *tx) DeleteCompute(workspace, name string) error {
	if !t.readOnly {
		if _, err := t.bumpGen(true); err != nil {
			return err
		}
	}
	return t.deleteOne(fmt.Sprintf("compute %s/%s", workspace, name), fmt.Sprintf("compute %q not found in workspace %q", name, workspace),
		`DELETE FROM computes WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name))
}
