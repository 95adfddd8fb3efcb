package identstore

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

func scanSigningKey(sc scanner) (*identity.SigningKey, error) {
	var k identity.SigningKey
	var createdOn int64
	var retiredOn sql.NullInt64
	if err := sc.Scan(&k.ID, &k.PrivatePEM, &createdOn, &retiredOn); err != nil {
		return nil, err
	}
	k.CreatedOn = fromMicros(createdOn)
	if retiredOn.Valid {
		r := fromMicros(retiredOn.Int64)
		k.RetiredOn = &r
	}
	return &k, nil
}

// nullMicros returns the stored form of an optional time.
func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(*t), Valid: true}
}

// QuerySigningKeys is the query of ListSigningKeys.
const QuerySigningKeys = `SELECT kid, private_pem, created_on, retired_on FROM signing_keys ORDER BY created_on DESC, kid DESC`

// ListSigningKeys returns all signing keys, newest first (by creation time
// descending, then ID descending).
func (t *Queries) ListSigningKeys() ([]*identity.SigningKey, error) {
	rows, err := t.Q.Query(QuerySigningKeys)
	if err != nil {
		return nil, fmt.Errorf("store: list signing keys: %w", err)
	}
	out, err := collect(rows, scanSigningKey)
	if err != nil {
		return nil, fmt.Errorf("store: list signing keys: %w", err)
	}
	return out, nil
}

// InsertSigningKey adds a signing key; a zero CreatedOn takes the
// transaction time. Returns ECONFLICT if a key of that ID exists.
func (t *Queries) InsertSigningKey(k *identity.SigningKey) error {
	if err := t.Writable("insert signing key"); err != nil {
		return err
	}
	if k.CreatedOn.IsZero() {
		k.CreatedOn = t.Now
	}
	res, err := t.Q.Exec(`INSERT INTO signing_keys (kid, private_pem, created_on, retired_on)
		VALUES ($1, $2, $3, $4) ON CONFLICT (kid) DO NOTHING`,
		k.ID, k.PrivatePEM, micros(k.CreatedOn), nullMicros(k.RetiredOn))
	if err != nil {
		return fmt.Errorf("store: insert signing key %q: %w", k.ID, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert signing key %q: %w", k.ID, err)
	}
	if n == 0 {
		return core.Errorf(core.ECONFLICT, "signing key %q already exists", k.ID)
	}
	normTime(&k.CreatedOn)
	normTimePtr(&k.RetiredOn)
	return nil
}

// UpdateSigningKey replaces the stored key of k.ID with k. Returns
// ENOTFOUND.
func (t *Queries) UpdateSigningKey(k *identity.SigningKey) error {
	if err := t.Writable("update signing key"); err != nil {
		return err
	}
	res, err := t.Q.Exec(`UPDATE signing_keys SET private_pem = $2, created_on = $3, retired_on = $4 WHERE kid = $1`,
		k.ID, k.PrivatePEM, micros(k.CreatedOn), nullMicros(k.RetiredOn))
	if err != nil {
		return fmt.Errorf("store: update signing key %q: %w", k.ID, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: update signing key %q: %w", k.ID, err)
	} else if n == 0 {
		return core.Errorf(core.ENOTFOUND, "signing key %q not found", k.ID)
	}
	normTime(&k.CreatedOn)
	normTimePtr(&k.RetiredOn)
	return nil
}
