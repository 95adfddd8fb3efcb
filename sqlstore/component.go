package sqlstore

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal"
)

// Registered command components live in their own table (migration 0025), one
// row per version, the version itself a JSON document whose archived flag
// is the column's, so that archiving rewrites no document.

// componentColumns are the columns scanComponent reads, in order.
const componentColumns = `workspace, archived, doc`

func scanComponent(sc scanner) (*shoal.Component, error) {
	var (
		e        shoal.Component
		ws       string
		archived int64
		doc      []byte
	)
	if err := sc.Scan(&ws, &archived, &doc); err != nil {
		return nil, err
	}
	// Numbers stay json.Number, as decoding the document left them: an
	// input's default reads back as written (10, not 10.0).
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("decode component: %w", err)
	}
	e.Workspace, e.Archived = ws, archived != 0
	return &e, nil
}

// InsertComponent adds a version; a zero CreatedOn takes the
// transaction time. Returns ECONFLICT when the version exists.
func (t *tx) InsertComponent(c *shoal.Component) error {
	if err := t.writable("insert component"); err != nil {
		return err
	}
	if c.CreatedOn.IsZero() {
		c.CreatedOn = t.now
	}
	normTime(&c.CreatedOn)
	doc, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("store: encode component %s:%s: %w", c.Name, c.Version, err)
	}
	// The creation order, which @latest follows.
	seq, err := t.NextSeq("component")
	if err != nil {
		return err
	}
	res, err := t.exec(`INSERT INTO components (workspace_key, name_key, version, workspace, seq, archived, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_key, name_key, version) DO NOTHING`,
		key(c.Workspace), key(c.Name), c.Version, c.Workspace, seq, boolInt(c.Archived), string(doc))
	if err != nil {
		return fmt.Errorf("store: insert component %s:%s in %s: %w", c.Name, c.Version, c.Workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: insert component %s:%s in %s: %w", c.Name, c.Version, c.Workspace, err)
	} else if n == 0 {
		return shoal.Errorf(shoal.ECONFLICT, "component %s already has version %q in workspace %s", c.Name, c.Version, c.Workspace)
	}
	return nil
}

// GetComponent returns one version, archived or not. Returns ENOTFOUND.
func (t *tx) GetComponent(workspace, name, version string) (*shoal.Component, error) {
	e, err := scanComponent(t.queryRow(`SELECT `+componentColumns+` FROM components
		WHERE workspace_key = $1 AND name_key = $2 AND version = $3`, key(workspace), key(name), version))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, shoal.Errorf(shoal.ENOTFOUND, "component %s has no version %q in workspace %s", name, version, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: get component %s:%s in %s: %w", name, version, workspace, err)
	}
	return e, nil
}

// LatestComponent returns the version created last that is not
// archived. Returns ENOTFOUND.
func (t *tx) LatestComponent(workspace, name string) (*shoal.Component, error) {
	e, err := scanComponent(t.queryRow(`SELECT `+componentColumns+` FROM components
		WHERE workspace_key = $1 AND name_key = $2 AND archived = 0 ORDER BY seq DESC LIMIT 1`, key(workspace), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, shoal.Errorf(shoal.ENOTFOUND, "component %s has no version that is not archived in workspace %s", name, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: latest component %s in %s: %w", name, workspace, err)
	}
	return e, nil
}

// ListComponents returns the versions filter selects, by name, newest
// first within a name.
func (t *tx) ListComponents(f shoal.ComponentFilter) ([]*shoal.Component, error) {
	q := `SELECT ` + componentColumns + ` FROM components WHERE workspace_key = $1`
	args := []any{key(f.Workspace)}
	if f.Name != "" {
		q += ` AND name_key = $2`
		args = append(args, key(f.Name))
	}
	if !f.Archived {
		q += ` AND archived = 0`
	}
	q += ` ORDER BY name_key, seq DESC`
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list components of %s: %w", f.Workspace, err)
	}
	out, err := collect(rows, scanComponent)
	if err != nil {
		return nil, fmt.Errorf("store: list components of %s: %w", f.Workspace, err)
	}
	return out, nil
}

// SetComponentArchived archives or restores one version, or every
// version when version is "". Returns ENOTFOUND when none matches.
func (t *tx) SetComponentArchived(workspace, name, version string, archived bool) error {
	if err := t.writable("archive component"); err != nil {
		return err
	}
	q := `UPDATE components SET archived = $3 WHERE workspace_key = $1 AND name_key = $2`
	args := []any{key(workspace), key(name), boolInt(archived)}
	if version != "" {
		q += ` AND version = $4`
		args = append(args, version)
	}
	res, err := t.exec(q, args...)
	if err != nil {
		return fmt.Errorf("store: archive component %s in %s: %w", name, workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: archive component %s in %s: %w", name, workspace, err)
	} else if n == 0 {
		if version != "" {
			return shoal.Errorf(shoal.ENOTFOUND, "component %s has no version %q in workspace %s", name, version, workspace)
		}
		return shoal.Errorf(shoal.ENOTFOUND, "component %s is not registered in workspace %s", name, workspace)
	}
	return nil
}
