package assetstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Datastores live in their own table (migration 0031), the sealed
// credentials in a column of their own and the rest a JSON document, as
// registries' logins: a document read for a list never holds a secret.

func scanDatastore(sc scanner) (*asset.Datastore, error) {
	var (
		d   asset.Datastore
		doc []byte
	)
	if err := sc.Scan(&d.Workspace, &d.SealedCredentials, &doc); err != nil {
		return nil, err
	}
	ws, sealed := d.Workspace, d.SealedCredentials
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decode datastore: %w", err)
	}
	d.Workspace, d.SealedCredentials = ws, sealed
	return &d, nil
}

// PutDatastore creates a workspace's datastore or replaces the one of
// the same name; a zero CreatedOn takes the transaction time.
func (t *Assets) PutDatastore(d *asset.Datastore) error {
	if err := t.Writable("put datastore"); err != nil {
		return err
	}
	if d.CreatedOn.IsZero() {
		d.CreatedOn = t.Now
	}
	normTime(&d.CreatedOn)
	doc, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("store: encode datastore %s: %w", d.Name, err)
	}
	if _, err := t.Q.Exec(`INSERT INTO datastores (workspace_key, name_key, workspace, sealed_credentials, doc)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_key, name_key) DO UPDATE SET workspace = excluded.workspace,
			sealed_credentials = excluded.sealed_credentials, doc = excluded.doc`,
		key(d.Workspace), key(d.Name), d.Workspace, d.SealedCredentials, string(doc)); err != nil {
		return fmt.Errorf("store: put datastore %s in %s: %w", d.Name, d.Workspace, err)
	}
	return nil
}

// GetDatastore returns a workspace's stored datastore. Returns ENOTFOUND.
func (t *Assets) GetDatastore(workspace, name string) (*asset.Datastore, error) {
	d, err := scanDatastore(t.Q.QueryRow(`SELECT workspace, sealed_credentials, doc FROM datastores WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "datastore %s is not in workspace %s; see `shoal datastore list`", name, workspace)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get datastore %s in %s: %w", name, workspace, err)
	}
	return d, nil
}

// ListDatastores returns a workspace's stored datastores ordered by name.
func (t *Assets) ListDatastores(workspace string) ([]*asset.Datastore, error) {
	rows, err := t.Q.Query(`SELECT workspace, sealed_credentials, doc FROM datastores WHERE workspace_key = $1 ORDER BY name_key`, key(workspace))
	if err != nil {
		return nil, fmt.Errorf("store: list datastores of %s: %w", workspace, err)
	}
	out, err := collect(rows, scanDatastore)
	if err != nil {
		return nil, fmt.Errorf("store: list datastores of %s: %w", workspace, err)
	}
	return out, nil
}

// DeleteDatastore removes a workspace's datastore. Returns ENOTFOUND.
func (t *Assets) DeleteDatastore(workspace, name string) error {
	if err := t.Writable("delete datastore"); err != nil {
		return err
	}
	res, err := t.Q.Exec(`DELETE FROM datastores WHERE workspace_key = $1 AND name_key = $2`, key(workspace), key(name))
	if err != nil {
		return fmt.Errorf("store: delete datastore %s in %s: %w", name, workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: delete datastore %s in %s: %w", name, workspace, err)
	} else if n == 0 {
		return core.Errorf(core.ENOTFOUND, "datastore %s is not in workspace %s; see `shoal datastore list`", name, workspace)
	}
	return nil
}
