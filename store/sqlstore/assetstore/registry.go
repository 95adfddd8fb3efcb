package assetstore

import (
	"encoding/json"
	"fmt"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Registries' logins live in their own table (migration 0023), the
// sealed password in a column of its own and the rest a JSON document,
// so that a document read for a list never holds the password.

func scanRegistry(sc scanner) (*asset.Registry, error) {
	var (
		r   asset.Registry
		doc []byte
	)
	if err := sc.Scan(&r.Workspace, &r.SealedPassword, &doc); err != nil {
		return nil, err
	}
	ws, sealed := r.Workspace, r.SealedPassword
	if err := json.Unmarshal(doc, &r); err != nil {
		return nil, fmt.Errorf("decode registry: %w", err)
	}
	r.Workspace, r.SealedPassword = ws, sealed
	return &r, nil
}

// PutRegistry adds a workspace's registry login or replaces the one of
// the same server (compared case-insensitively); a zero CreatedOn takes
// the transaction time.
func (t *Assets) PutRegistry(r *asset.Registry) error {
	if err := t.Writable("put registry"); err != nil {
		return err
	}
	if r.CreatedOn.IsZero() {
		r.CreatedOn = t.Now
	}
	normTime(&r.CreatedOn)
	doc, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store: encode registry %s: %w", r.Server, err)
	}
	if _, err := t.Q.Exec(`INSERT INTO registries (workspace_key, server_key, workspace, sealed_password, doc)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_key, server_key) DO UPDATE SET workspace = excluded.workspace,
			sealed_password = excluded.sealed_password, doc = excluded.doc`,
		key(r.Workspace), key(r.Server), r.Workspace, r.SealedPassword, string(doc)); err != nil {
		return fmt.Errorf("store: put registry %s in %s: %w", r.Server, r.Workspace, err)
	}
	return nil
}

// ListRegistries returns a workspace's registry logins ordered by server.
func (t *Assets) ListRegistries(workspace string) ([]*asset.Registry, error) {
	rows, err := t.Q.Query(`SELECT workspace, sealed_password, doc FROM registries WHERE workspace_key = $1 ORDER BY server_key`, key(workspace))
	if err != nil {
		return nil, fmt.Errorf("store: list registries of %s: %w", workspace, err)
	}
	out, err := collect(rows, scanRegistry)
	if err != nil {
		return nil, fmt.Errorf("store: list registries of %s: %w", workspace, err)
	}
	return out, nil
}

// DeleteRegistry removes a workspace's registry login. Returns ENOTFOUND.
func (t *Assets) DeleteRegistry(workspace, server string) error {
	if err := t.Writable("delete registry"); err != nil {
		return err
	}
	res, err := t.Q.Exec(`DELETE FROM registries WHERE workspace_key = $1 AND server_key = $2`, key(workspace), key(server))
	if err != nil {
		return fmt.Errorf("store: delete registry %s in %s: %w", server, workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: delete registry %s in %s: %w", server, workspace, err)
	} else if n == 0 {
		return core.Errorf(core.ENOTFOUND, "registry %s is not in workspace %s; see `shoal registry list`", server, workspace)
	}
	return nil
}
