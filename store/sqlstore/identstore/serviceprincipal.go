package identstore

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// spColumns are the columns scanServicePrincipal reads, in order.
const spColumns = `name, description, client_id, secret_hash, secret_created_on, created_on, created_by`

func scanServicePrincipal(sc scanner) (*identity.ServicePrincipal, error) {
	var sp identity.ServicePrincipal
	var secretOn, createdOn int64
	if err := sc.Scan(&sp.Name, &sp.Description, &sp.ClientID, &sp.SecretHash, &secretOn, &createdOn, &sp.CreatedBy); err != nil {
		return nil, err
	}
	sp.SecretCreatedOn = fromMicros(secretOn)
	sp.CreatedOn = fromMicros(createdOn)
	return &sp, nil
}

// GetServicePrincipal returns a service principal by name, compared
// case-insensitively. Returns ENOTFOUND.
func (t *Queries) GetServicePrincipal(name string) (*identity.ServicePrincipal, error) {
	sp, err := scanServicePrincipal(t.Q.QueryRow(`SELECT `+spColumns+` FROM service_principals WHERE name_key = $1`, key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "service principal %q not found", name)
	} else if err != nil {
		return nil, fmt.Errorf("store: get service principal %q: %w", name, err)
	}
	return sp, nil
}

// FindServicePrincipalByClientID returns the service principal of a
// client ID, compared exactly. Returns ENOTFOUND.
func (t *Queries) FindServicePrincipalByClientID(clientID string) (*identity.ServicePrincipal, error) {
	sp, err := scanServicePrincipal(t.Q.QueryRow(`SELECT `+spColumns+` FROM service_principals WHERE client_id = $1`, clientID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "no service principal has client ID %q", clientID)
	} else if err != nil {
		return nil, fmt.Errorf("store: find service principal by client ID %q: %w", clientID, err)
	}
	return sp, nil
}

// ListServicePrincipals returns all service principals ordered by
// lower-cased name.
func (t *Queries) ListServicePrincipals() ([]*identity.ServicePrincipal, error) {
	rows, err := t.Q.Query(`SELECT ` + spColumns + ` FROM service_principals ORDER BY name_key`)
	if err != nil {
		return nil, fmt.Errorf("store: list service principals: %w", err)
	}
	out, err := collect(rows, scanServicePrincipal)
	if err != nil {
		return nil, fmt.Errorf("store: list service principals: %w", err)
	}
	return out, nil
}

// InsertServicePrincipal adds a service principal; zero times take the
// transaction time. Returns ECONFLICT if one of that name (compared
// case-insensitively) or client ID exists.
func (t *Queries) InsertServicePrincipal(sp *identity.ServicePrincipal) error {
	if err := t.Writable("insert service principal"); err != nil {
		return err
	}
	if sp.CreatedOn.IsZero() {
		sp.CreatedOn = t.Now
	}
	if sp.SecretCreatedOn.IsZero() {
		sp.SecretCreatedOn = sp.CreatedOn
	}
	res, err := t.Q.Exec(`INSERT INTO service_principals (name_key, name, description, client_id, secret_hash, secret_created_on, created_on, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		key(sp.Name), sp.Name, sp.Description, sp.ClientID, sp.SecretHash, micros(sp.SecretCreatedOn), micros(sp.CreatedOn), sp.CreatedBy)
	if err != nil {
		return fmt.Errorf("store: insert service principal %q: %w", sp.Name, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert service principal %q: %w", sp.Name, err)
	}
	if n == 0 {
		if _, err := t.GetServicePrincipal(sp.Name); err == nil {
			return core.Errorf(core.ECONFLICT, "service principal %q already exists", sp.Name)
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		return core.Errorf(core.ECONFLICT, "client ID %q is taken", sp.ClientID)
	}
	normTime(&sp.CreatedOn)
	normTime(&sp.SecretCreatedOn)
	return nil
}

// UpdateServicePrincipal replaces the description and secret of the
// service principal of sp's name. Returns ENOTFOUND.
func (t *Queries) UpdateServicePrincipal(sp *identity.ServicePrincipal) error {
	if err := t.Writable("update service principal"); err != nil {
		return err
	}
	res, err := t.Q.Exec(`UPDATE service_principals SET description = $2, secret_hash = $3, secret_created_on = $4
		WHERE name_key = $1`, key(sp.Name), sp.Description, sp.SecretHash, micros(sp.SecretCreatedOn))
	if err != nil {
		return fmt.Errorf("store: update service principal %q: %w", sp.Name, err)
	}
	if n, err := affected(res); err != nil {
		return fmt.Errorf("store: update service principal %q: %w", sp.Name, err)
	} else if n == 0 {
		return core.Errorf(core.ENOTFOUND, "service principal %q not found", sp.Name)
	}
	normTime(&sp.SecretCreatedOn)
	return nil
}

// DeleteServicePrincipal removes a service principal by name, compared
// case-insensitively. Returns ENOTFOUND.
func (t *Queries) DeleteServicePrincipal(name string) error {
	return t.deleteOne(fmt.Sprintf("service principal %q", name), fmt.Sprintf("service principal %q not found", name),
		`DELETE FROM service_principals WHERE name_key = $1`, key(name))
}
