package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
)

// GetSetting reads a server setting. Returns ENOTFOUND.
func (t *tx) GetSetting(k string) (string, error) {
	var v string
	err := t.queryRow(`SELECT value FROM settings WHERE key = $1`, k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", core.Errorf(core.ENOTFOUND, "setting %q not found", k)
	} else if err != nil {
		return "", fmt.Errorf("store: get setting %q: %w", k, err)
	}
	return v, nil
}

// PutSetting writes a server setting, replacing any previous value.
func (t *tx) PutSetting(k, v string) error {
	if err := t.writable("put setting"); err != nil {
		return err
	}
	if _, err := t.exec(`INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
		return fmt.Errorf("store: put setting %q: %w", k, err)
	}
	return nil
}
