package identstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// tokenColumns are the columns scanToken reads, in order.
const tokenColumns = `id, name, principal_id, hash, created_on, expires_on, revoked, scope`

func scanToken(sc interface{ Scan(...any) error }) (*identity.APIToken, error) {
	var tok identity.APIToken
	var createdOn int64
	var expiresOn sql.NullInt64
	var revoked int64
	if err := sc.Scan(&tok.ID, &tok.Name, &tok.PrincipalID, &tok.Hash, &createdOn, &expiresOn, &revoked, &tok.Scope); err != nil {
		return nil, err
	}
	tok.CreatedOn = fromMicros(createdOn)
	if expiresOn.Valid {
		exp := fromMicros(expiresOn.Int64)
		tok.ExpiresOn = &exp
	}
	tok.Revoked = revoked != 0
	return &tok, nil
}

// InsertToken adds an API token; a zero CreatedOn takes the transaction
// time. Returns ECONFLICT if a token with that ID or hash exists.
func (t *Queries) InsertToken(tok *identity.APIToken) error {
	if err := t.Writable("insert token"); err != nil {
		return err
	}
	if tok.CreatedOn.IsZero() {
		tok.CreatedOn = t.Now
	}
	var expiresOn sql.NullInt64
	if tok.ExpiresOn != nil {
		expiresOn = sql.NullInt64{Int64: micros(*tok.ExpiresOn), Valid: true}
	}
	res, err := t.Q.Exec(`INSERT INTO api_tokens (id, name, principal_id, hash, created_on, expires_on, revoked, scope)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		tok.ID, tok.Name, tok.PrincipalID, tok.Hash, micros(tok.CreatedOn), expiresOn, boolInt(tok.Revoked), tok.Scope)
	if err != nil {
		return fmt.Errorf("store: insert token %q: %w", tok.ID, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert token %q: %w", tok.ID, err)
	}
	if n == 0 {
		return core.Errorf(core.ECONFLICT, "token %q already exists", tok.ID)
	}
	tok.CreatedOn = stored(tok.CreatedOn)
	if tok.ExpiresOn != nil {
		exp := stored(*tok.ExpiresOn)
		tok.ExpiresOn = &exp
	}
	return nil
}

// FindTokenByHash returns the token with that hash. Returns ENOTFOUND.
func (t *Queries) FindTokenByHash(hash string) (*identity.APIToken, error) {
	tok, err := scanToken(t.Q.QueryRow(`SELECT `+tokenColumns+` FROM api_tokens WHERE hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		// The hash is a credential's fingerprint: keep it out of the message.
		return nil, core.Errorf(core.ENOTFOUND, "token not found")
	} else if err != nil {
		return nil, fmt.Errorf("store: find token by hash: %w", err)
	}
	return tok, nil
}

// ListTokens returns the tokens of principalID ("" for all) ordered by
// creation time, then ID.
func (t *Queries) ListTokens(principalID string) ([]*identity.APIToken, error) {
	q := `SELECT ` + tokenColumns + ` FROM api_tokens`
	var args []any
	if principalID != "" {
		q += ` WHERE principal_id = $1`
		args = append(args, principalID)
	}
	q += ` ORDER BY created_on, id`
	rows, err := t.Q.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	defer rows.Close()
	out := []*identity.APIToken{}
	for rows.Next() {
		tok, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list tokens: %w", err)
		}
		out = append(out, tok)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list tokens: %w", err)
	}
	return out, nil
}

// GetToken returns a token by ID. Returns ENOTFOUND.
func (t *Queries) GetToken(id string) (*identity.APIToken, error) {
	tok, err := scanToken(t.Q.QueryRow(`SELECT `+tokenColumns+` FROM api_tokens WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "token %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("store: get token %q: %w", id, err)
	}
	return tok, nil
}

// UpdateToken replaces the name, expiry and revocation of the stored token
// of tok.ID; its principal, hash and creation time never change and are
// kept as stored. Returns ENOTFOUND.
func (t *Queries) UpdateToken(tok *identity.APIToken) error {
	if err := t.Writable("update token"); err != nil {
		return err
	}
	res, err := t.Q.Exec(`UPDATE api_tokens SET name = $2, expires_on = $3, revoked = $4 WHERE id = $1`,
		tok.ID, tok.Name, nullMicros(tok.ExpiresOn), boolInt(tok.Revoked))
	if err != nil {
		return fmt.Errorf("store: update token %q: %w", tok.ID, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: update token %q: %w", tok.ID, err)
	} else if n == 0 {
		return core.Errorf(core.ENOTFOUND, "token %q not found", tok.ID)
	}
	normTimePtr(&tok.ExpiresOn)
	return nil
}
