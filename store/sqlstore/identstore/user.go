package identstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// userColumns are the columns scanUser reads, in order.
const userColumns = `name, disabled, admin, created_on, oidc_issuer, oidc_subject`

func scanUser(sc scanner) (*identity.User, error) {
	var u identity.User
	var disabled, admin, createdOn int64
	if err := sc.Scan(&u.Name, &disabled, &admin, &createdOn, &u.OIDCIssuer, &u.OIDCSubject); err != nil {
		return nil, err
	}
	u.Disabled, u.Admin = disabled != 0, admin != 0
	u.CreatedOn = fromMicros(createdOn)
	return &u, nil
}

// GetUser returns a user by name, compared case-insensitively. Returns
// ENOTFOUND.
func (t *Queries) GetUser(name string) (*identity.User, error) {
	u, err := scanUser(t.Q.QueryRow(`SELECT `+userColumns+` FROM users WHERE name_key = $1`, key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "user %q not found", name)
	} else if err != nil {
		return nil, fmt.Errorf("store: get user %q: %w", name, err)
	}
	return u, nil
}

// QueryUserByOIDC is the query of FindUserByOIDC. It repeats the condition
// of the partial index users_oidc so that the index serves it.
const QueryUserByOIDC = `SELECT ` + userColumns + ` FROM users
	WHERE oidc_issuer = $1 AND oidc_subject = $2 AND oidc_issuer <> '' AND oidc_subject <> ''`

// FindUserByOIDC returns the user linked to the sign-in account of issuer
// and subject, both compared exactly. Users without a link match no
// account: an empty issuer or subject returns ENOTFOUND.
func (t *Queries) FindUserByOIDC(issuer, subject string) (*identity.User, error) {
	if issuer == "" || subject == "" {
		return nil, core.Errorf(core.ENOTFOUND, "no user is linked to subject %q of issuer %q", subject, issuer)
	}
	u, err := scanUser(t.Q.QueryRow(QueryUserByOIDC, issuer, subject))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "no user is linked to subject %q of issuer %q", subject, issuer)
	} else if err != nil {
		return nil, fmt.Errorf("store: find user by subject %q of issuer %q: %w", subject, issuer, err)
	}
	return u, nil
}

// ListUsers returns all users ordered by lower-cased name.
func (t *Queries) ListUsers() ([]*identity.User, error) {
	rows, err := t.Q.Query(`SELECT ` + userColumns + ` FROM users ORDER BY name_key`)
	if err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	out, err := collect(rows, scanUser)
	if err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	return out, nil
}

// InsertUser adds a user; a zero CreatedOn takes the transaction time.
// Returns ECONFLICT if a user of that name (compared case-insensitively)
// exists or another user is linked to the same sign-in account.
func (t *Queries) InsertUser(u *identity.User) error {
	if err := t.Writable("insert user"); err != nil {
		return err
	}
	if u.CreatedOn.IsZero() {
		u.CreatedOn = t.Now
	}
	// Without a conflict target, DO NOTHING covers the name and the
	// sign-in account alike.
	res, err := t.Q.Exec(`INSERT INTO users (name_key, name, disabled, admin, created_on, oidc_issuer, oidc_subject)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
		key(u.Name), u.Name, boolInt(u.Disabled), boolInt(u.Admin), micros(u.CreatedOn), u.OIDCIssuer, u.OIDCSubject)
	if err != nil {
		return fmt.Errorf("store: insert user %q: %w", u.Name, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert user %q: %w", u.Name, err)
	}
	if n == 0 {
		if err := t.oidcTaken(u); err != nil {
			return err
		}
		return core.Errorf(core.ECONFLICT, "user %q already exists", u.Name)
	}
	normTime(&u.CreatedOn)
	return nil
}

// oidcTaken returns ECONFLICT when a user other than u is linked to u's
// sign-in account.
func (t *Queries) oidcTaken(u *identity.User) error {
	if u.OIDCIssuer == "" || u.OIDCSubject == "" {
		return nil
	}
	other, err := t.FindUserByOIDC(u.OIDCIssuer, u.OIDCSubject)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	if key(other.Name) == key(u.Name) {
		return nil
	}
	return core.Errorf(core.ECONFLICT, "subject %q of issuer %q is already linked to user %q", u.OIDCSubject, u.OIDCIssuer, other.Name)
}

// UpdateUser replaces the stored user of u's name (compared
// case-insensitively) with u. Returns ENOTFOUND, or ECONFLICT if another
// user is linked to u's sign-in account.
func (t *Queries) UpdateUser(u *identity.User) error {
	if err := t.Writable("update user"); err != nil {
		return err
	}
	// The unique index would fail the UPDATE with a driver error: report
	// the conflict as such instead.
	if err := t.oidcTaken(u); err != nil {
		return err
	}
	res, err := t.Q.Exec(`UPDATE users SET name = $2, disabled = $3, admin = $4, created_on = $5,
			oidc_issuer = $6, oidc_subject = $7
		WHERE name_key = $1`,
		key(u.Name), u.Name, boolInt(u.Disabled), boolInt(u.Admin), micros(u.CreatedOn), u.OIDCIssuer, u.OIDCSubject)
	if err != nil {
		return fmt.Errorf("store: update user %q: %w", u.Name, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: update user %q: %w", u.Name, err)
	} else if n == 0 {
		return core.Errorf(core.ENOTFOUND, "user %q not found", u.Name)
	}
	normTime(&u.CreatedOn)
	return nil
}
