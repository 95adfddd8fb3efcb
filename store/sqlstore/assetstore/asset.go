package assetstore

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlstore/sqlq"
)

// Versioned assets live in a table per kind (environments, migration
// 0021; components, 0025; data assets and models, 0032; codes, 0033), one row per version, the version itself a JSON
// document whose archived flag is the column's, so that archiving
// rewrites no document. The tables have the same columns, so one set of
// statements serves every kind, over the kind's table.

// assetColumns are the columns scanAsset reads, in order.
const assetColumns = `workspace, archived, doc`

// assetTables is each kind's table. A table name is never a request's:
// only these are ever put into a statement.
var assetTables = map[asset.AssetKind]string{
	asset.AssetEnvironment: "environments",
	asset.AssetComponent:   "components",
	asset.AssetData:        "data_assets",
	asset.AssetModel:       "models",
	asset.AssetCode:        "codes",
}

// assetTable returns kind's table.
func assetTable(kind asset.AssetKind) (string, error) {
	table, ok := assetTables[kind]
	if !ok {
		return "", core.Errorf(core.EINTERNAL, "store: no table for assets of kind %q", kind)
	}
	return table, nil
}

// assetScanner returns a scanner of kind's rows.
func assetScanner(kind asset.AssetKind) func(sc scanner) (asset.Asset, error) {
	return func(sc scanner) (asset.Asset, error) {
		var (
			ws       string
			archived int64
			doc      []byte
		)
		if err := sc.Scan(&ws, &archived, &doc); err != nil {
			return nil, err
		}
		a, err := store.NewAsset(kind)
		if err != nil {
			return nil, err
		}
		// Numbers stay json.Number, as decoding the document left them: a
		// component input's default reads back as written (10, not 10.0).
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(a); err != nil {
			return nil, fmt.Errorf("decode %s: %w", kind, err)
		}
		m := a.AssetMeta()
		m.Workspace, m.Archived = ws, archived != 0
		a.SetAssetMeta(m)
		return a, nil
	}
}

// InsertAsset adds a version; a zero CreatedOn takes the transaction
// time. Returns ECONFLICT when the version exists.
func (t *Assets) InsertAsset(a asset.Asset) error {
	kind := a.AssetKind()
	table, err := assetTable(kind)
	if err != nil {
		return err
	}
	if err := t.Writable("insert " + string(kind)); err != nil {
		return err
	}
	m := a.AssetMeta()
	if m.CreatedOn.IsZero() {
		m.CreatedOn = t.Now
	}
	normTime(&m.CreatedOn)
	a.SetAssetMeta(m)
	doc, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("store: encode %s %s:%s: %w", kind, m.Name, m.Version, err)
	}
	// The creation order, which @latest follows.
	seq, err := sqlq.NextSeq(t.Q, string(kind))
	if err != nil {
		return err
	}
	res, err := t.Q.Exec(`INSERT INTO `+table+` (workspace_key, name_key, version, workspace, seq, archived, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_key, name_key, version) DO NOTHING`,
		key(m.Workspace), key(m.Name), m.Version, m.Workspace, seq, boolInt(m.Archived), string(doc))
	if err != nil {
		return fmt.Errorf("store: insert %s %s:%s in %s: %w", kind, m.Name, m.Version, m.Workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: insert %s %s:%s in %s: %w", kind, m.Name, m.Version, m.Workspace, err)
	} else if n == 0 {
		return core.Errorf(core.ECONFLICT, "%s %s already has version %q in workspace %s", kind, m.Name, m.Version, m.Workspace)
	}
	return nil
}

// GetAsset returns one version, archived or not. Returns ENOTFOUND.
func (t *Assets) GetAsset(kind asset.AssetKind, workspace, name, version string) (asset.Asset, error) {
	table, err := assetTable(kind)
	if err != nil {
		return nil, err
	}
	a, err := assetScanner(kind)(t.Q.QueryRow(`SELECT `+assetColumns+` FROM `+table+`
		WHERE workspace_key = $1 AND name_key = $2 AND version = $3`, key(workspace), key(name), version))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "%s %s has no version %q in workspace %s", kind, name, version, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: get %s %s:%s in %s: %w", kind, name, version, workspace, err)
	}
	return a, nil
}

// LatestAsset returns the version created last that is not archived.
// Returns ENOTFOUND.
func (t *Assets) LatestAsset(kind asset.AssetKind, workspace, name string) (asset.Asset, error) {
	table, err := assetTable(kind)
	if err != nil {
		return nil, err
	}
	a, err := assetScanner(kind)(t.Q.QueryRow(`SELECT `+assetColumns+` FROM `+table+`
		WHERE workspace_key = $1 AND name_key = $2 AND archived = 0 ORDER BY seq DESC LIMIT 1`, key(workspace), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "%s %s has no version that is not archived in workspace %s", kind, name, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: latest %s %s in %s: %w", kind, name, workspace, err)
	}
	return a, nil
}

// ListAssets returns the versions filter selects, by name, newest first
// within a name.
func (t *Assets) ListAssets(kind asset.AssetKind, f asset.AssetFilter) ([]asset.Asset, error) {
	table, err := assetTable(kind)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + assetColumns + ` FROM ` + table + ` WHERE workspace_key = $1`
	args := []any{key(f.Workspace)}
	if f.Name != "" {
		q += ` AND name_key = $2`
		args = append(args, key(f.Name))
	}
	if !f.Archived {
		q += ` AND archived = 0`
	}
	q += ` ORDER BY name_key, seq DESC`
	rows, err := t.Q.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list %ss of %s: %w", kind, f.Workspace, err)
	}
	out, err := collect(rows, assetScanner(kind))
	if err != nil {
		return nil, fmt.Errorf("store: list %ss of %s: %w", kind, f.Workspace, err)
	}
	return out, nil
}

// SetAssetArchived archives or restores one version, or every version
// when version is "". Returns ENOTFOUND when none matches.
func (t *Assets) SetAssetArchived(kind asset.AssetKind, workspace, name, version string, archived bool) error {
	table, err := assetTable(kind)
	if err != nil {
		return err
	}
	if err := t.Writable("archive " + string(kind)); err != nil {
		return err
	}
	q := `UPDATE ` + table + ` SET archived = $3 WHERE workspace_key = $1 AND name_key = $2`
	args := []any{key(workspace), key(name), boolInt(archived)}
	if version != "" {
		q += ` AND version = $4`
		args = append(args, version)
	}
	res, err := t.Q.Exec(q, args...)
	if err != nil {
		return fmt.Errorf("store: archive %s %s in %s: %w", kind, name, workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: archive %s %s in %s: %w", kind, name, workspace, err)
	} else if n == 0 {
		if version != "" {
			return core.Errorf(core.ENOTFOUND, "%s %s has no version %q in workspace %s", kind, name, version, workspace)
		}
		return core.Errorf(core.ENOTFOUND, "%s %s is not registered in workspace %s", kind, name, workspace)
	}
	return nil
}
