package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal"
)

// Registered environments live in their own table (migration 0021), one
// row per version, the version itself a JSON document whose archived flag
// is the column's, so that archiving rewrites no document.

// environmentColumns are the columns scanEnvironment reads, in order.
const environmentColumns = `workspace, archived, doc`

func scanEnvironment(sc scanner) (*shoal.Environment, error) {
	var (
		e        shoal.Environment
		ws       string
		archived int64
		doc      []byte
	)
	if err := sc.Scan(&ws, &archived, &doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &e); err != nil {
		return nil, fmt.Errorf("decode environment: %w", err)
	}
	e.Workspace, e.Archived = ws, archived != 0
	return &e, nil
}

// InsertEnvironment adds a version; a zero CreatedOn takes the
// transaction time. Returns ECONFLICT when the version exists.
func (t *tx) InsertEnvironment(e *shoal.Environment) error {
	if err := t.writable("insert environment"); err != nil {
		return err
	}
	if e.CreatedOn.IsZero() {
		e.CreatedOn = t.now
	}
	normTime(&e.CreatedOn)
	doc, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("store: encode environment %s:%s: %w", e.Name, e.Version, err)
	}
	// The creation order, which @latest follows.
	seq, err := t.NextSeq("environment")
	if err != nil {
		return err
	}
	res, err := t.exec(`INSERT INTO environments (workspace_key, name_key, version, workspace, seq, archived, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (workspace_key, name_key, version) DO NOTHING`,
		key(e.Workspace), key(e.Name), e.Version, e.Workspace, seq, boolInt(e.Archived), string(doc))
	if err != nil {
		return fmt.Errorf("store: insert environment %s:%s in %s: %w", e.Name, e.Version, e.Workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: insert environment %s:%s in %s: %w", e.Name, e.Version, e.Workspace, err)
	} else if n == 0 {
		return shoal.Errorf(shoal.ECONFLICT, "environment %s already has version %q in workspace %s", e.Name, e.Version, e.Workspace)
	}
	return nil
}

// GetEnvironment returns one version, archived or not. Returns ENOTFOUND.
func (t *tx) GetEnvironment(workspace, name, version string) (*shoal.Environment, error) {
	e, err := scanEnvironment(t.queryRow(`SELECT `+environmentColumns+` FROM environments
		WHERE workspace_key = $1 AND name_key = $2 AND version = $3`, key(workspace), key(name), version))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, shoal.Errorf(shoal.ENOTFOUND, "environment %s has no version %q in workspace %s", name, version, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: get environment %s:%s in %s: %w", name, version, workspace, err)
	}
	return e, nil
}

// LatestEnvironment returns the version created last that is not
// archived. Returns ENOTFOUND.
func (t *tx) LatestEnvironment(workspace, name string) (*shoal.Environment, error) {
	e, err := scanEnvironment(t.queryRow(`SELECT `+environmentColumns+` FROM environments
		WHERE workspace_key = $1 AND name_key = $2 AND archived = 0 ORDER BY seq DESC LIMIT 1`, key(workspace), key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, shoal.Errorf(shoal.ENOTFOUND, "environment %s has no version that is not archived in workspace %s", name, workspace)
	} else if err != nil {
		return nil, fmt.Errorf("store: latest environment %s in %s: %w", name, workspace, err)
	}
	return e, nil
}

// ListEnvironments returns the versions filter selects, by name, newest
// first within a name.
func (t *tx) ListEnvironments(f shoal.EnvironmentFilter) ([]*shoal.Environment, error) {
	q := `SELECT ` + environmentColumns + ` FROM environments WHERE workspace_key = $1`
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
		return nil, fmt.Errorf("store: list environments of %s: %w", f.Workspace, err)
	}
	out, err := collect(rows, scanEnvironment)
	if err != nil {
		return nil, fmt.Errorf("store: list environments of %s: %w", f.Workspace, err)
	}
	return out, nil
}

// SetEnvironmentArchived archives or restores one version, or every
// version when version is "". Returns ENOTFOUND when none matches.
func (t *tx) SetEnvironmentArchived(workspace, name, version string, archived bool) error {
	if err := t.writable("archive environment"); err != nil {
		return err
	}
	q := `UPDATE environments SET archived = $3 WHERE workspace_key = $1 AND name_key = $2`
	args := []any{key(workspace), key(name), boolInt(archived)}
	if version != "" {
		q += ` AND version = $4`
		args = append(args, version)
	}
	res, err := t.exec(q, args...)
	if err != nil {
		return fmt.Errorf("store: archive environment %s in %s: %w", name, workspace, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: archive environment %s in %s: %w", name, workspace, err)
	} else if n == 0 {
		if version != "" {
			return shoal.Errorf(shoal.ENOTFOUND, "environment %s has no version %q in workspace %s", name, version, workspace)
		}
		return shoal.Errorf(shoal.ENOTFOUND, "environment %s is not registered in workspace %s", name, workspace)
	}
	return nil
}
