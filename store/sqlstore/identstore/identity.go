package identstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// identityColumns are the columns scanIdentity reads, in order.
const identityColumns = `name, client_id, system, created_on`

func scanIdentity(sc scanner) (*identity.Identity, error) {
	var i identity.Identity
	var system, createdOn int64
	if err := sc.Scan(&i.Name, &i.ClientID, &system, &createdOn); err != nil {
		return nil, err
	}
	i.System = system != 0
	i.CreatedOn = fromMicros(createdOn)
	return &i, nil
}

// GetIdentity returns an identity by name, compared case-insensitively.
// Returns ENOTFOUND.
func (t *Queries) GetIdentity(name string) (*identity.Identity, error) {
	i, err := scanIdentity(t.Q.QueryRow(`SELECT `+identityColumns+` FROM identities WHERE name_key = $1`, key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "identity %q not found", name)
	} else if err != nil {
		return nil, fmt.Errorf("store: get identity %q: %w", name, err)
	}
	return i, nil
}

// FindIdentityByClientID returns the identity of a client ID, compared
// exactly. Returns ENOTFOUND.
func (t *Queries) FindIdentityByClientID(clientID string) (*identity.Identity, error) {
	i, err := scanIdentity(t.Q.QueryRow(`SELECT `+identityColumns+` FROM identities WHERE client_id = $1`, clientID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "no identity has client ID %q", clientID)
	} else if err != nil {
		return nil, fmt.Errorf("store: find identity by client ID %q: %w", clientID, err)
	}
	return i, nil
}

// ListIdentities returns all identities ordered by lower-cased name.
func (t *Queries) ListIdentities() ([]*identity.Identity, error) {
	rows, err := t.Q.Query(`SELECT ` + identityColumns + ` FROM identities ORDER BY name_key`)
	if err != nil {
		return nil, fmt.Errorf("store: list identities: %w", err)
	}
	out, err := collect(rows, scanIdentity)
	if err != nil {
		return nil, fmt.Errorf("store: list identities: %w", err)
	}
	return out, nil
}

// InsertIdentity adds an identity; a zero CreatedOn takes the transaction
// time. Returns ECONFLICT if an identity of that name (compared
// case-insensitively) or client ID exists.
func (t *Queries) InsertIdentity(i *identity.Identity) error {
	if err := t.Writable("insert identity"); err != nil {
		return err
	}
	if i.CreatedOn.IsZero() {
		i.CreatedOn = t.Now
	}
	// Without a conflict target, DO NOTHING covers the name and the client
	// ID alike.
	res, err := t.Q.Exec(`INSERT INTO identities (name_key, name, client_id, system, created_on)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		key(i.Name), i.Name, i.ClientID, boolInt(i.System), micros(i.CreatedOn))
	if err != nil {
		return fmt.Errorf("store: insert identity %q: %w", i.Name, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert identity %q: %w", i.Name, err)
	}
	if n == 0 {
		if _, err := t.GetIdentity(i.Name); err == nil {
			return core.Errorf(core.ECONFLICT, "identity %q already exists", i.Name)
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		return core.Errorf(core.ECONFLICT, "client ID %q is taken", i.ClientID)
	}
	normTime(&i.CreatedOn)
	return nil
}

// DeleteIdentity removes an identity by name, compared case-insensitively.
// Returns ENOTFOUND.
func (t *Queries) DeleteIdentity(name string) error {
	return t.deleteOne(fmt.Sprintf("identity %q", name), fmt.Sprintf("identity %q not found", name),
		`DELETE FROM identities WHERE name_key = $1`, key(name))
}
