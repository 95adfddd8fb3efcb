package identstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// roleColumns are the columns scanRole reads, in order.
const roleColumns = `name, description, actions, not_actions, created_on`

func scanRole(sc scanner) (*identity.RoleDefinition, error) {
	var r identity.RoleDefinition
	var actions, notActions []byte
	var createdOn int64
	if err := sc.Scan(&r.Name, &r.Description, &actions, &notActions, &createdOn); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(actions, &r.Actions); err != nil {
		return nil, fmt.Errorf("decode actions of role %q: %w", r.Name, err)
	}
	if err := json.Unmarshal(notActions, &r.NotActions); err != nil {
		return nil, fmt.Errorf("decode not_actions of role %q: %w", r.Name, err)
	}
	r.CreatedOn = fromMicros(createdOn)
	return &r, nil
}

// GetRole returns a custom role by name, compared case-insensitively.
// Returns ENOTFOUND; built-in roles are not stored.
func (t *Queries) GetRole(name string) (*identity.RoleDefinition, error) {
	r, err := scanRole(t.Q.QueryRow(`SELECT `+roleColumns+` FROM roles WHERE name_key = $1`, key(name)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, core.Errorf(core.ENOTFOUND, "role %q not found", name)
	} else if err != nil {
		return nil, fmt.Errorf("store: get role %q: %w", name, err)
	}
	return r, nil
}

// ListRoles returns the custom roles ordered by lower-cased name.
func (t *Queries) ListRoles() ([]*identity.RoleDefinition, error) {
	rows, err := t.Q.Query(`SELECT ` + roleColumns + ` FROM roles ORDER BY name_key`)
	if err != nil {
		return nil, fmt.Errorf("store: list roles: %w", err)
	}
	out, err := collect(rows, scanRole)
	if err != nil {
		return nil, fmt.Errorf("store: list roles: %w", err)
	}
	return out, nil
}

// InsertRole adds a custom role; a zero CreatedOn takes the transaction
// time. BuiltIn is not stored: roles read back have it false. Returns
// ECONFLICT if a role of that name (compared case-insensitively) exists.
func (t *Queries) InsertRole(r *identity.RoleDefinition) error {
	if err := t.Writable("insert role"); err != nil {
		return err
	}
	if r.CreatedOn.IsZero() {
		r.CreatedOn = t.Now
	}
	// nil and empty lists each read back as written.
	actions, err := json.Marshal(r.Actions)
	if err != nil {
		return fmt.Errorf("store: insert role %q: encode actions: %w", r.Name, err)
	}
	notActions, err := json.Marshal(r.NotActions)
	if err != nil {
		return fmt.Errorf("store: insert role %q: encode not_actions: %w", r.Name, err)
	}
	res, err := t.Q.Exec(`INSERT INTO roles (name_key, name, description, actions, not_actions, created_on)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name_key) DO NOTHING`,
		key(r.Name), r.Name, r.Description, string(actions), string(notActions), micros(r.CreatedOn))
	if err != nil {
		return fmt.Errorf("store: insert role %q: %w", r.Name, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert role %q: %w", r.Name, err)
	}
	if n == 0 {
		return core.Errorf(core.ECONFLICT, "role %q already exists", r.Name)
	}
	normTime(&r.CreatedOn)
	return nil
}

// roleAssignmentColumns are the columns scanRoleAssignment reads, in order.
const roleAssignmentColumns = `id, principal_id, role, workspace, created_on, created_by`

func scanRoleAssignment(sc scanner) (*identity.RoleAssignment, error) {
	var a identity.RoleAssignment
	var createdOn int64
	if err := sc.Scan(&a.ID, &a.PrincipalID, &a.Role, &a.Workspace, &createdOn, &a.CreatedBy); err != nil {
		return nil, err
	}
	a.CreatedOn = fromMicros(createdOn)
	return &a, nil
}

// ListRoleAssignments returns the assignments of principalID (compared
// exactly; "" for all) in workspace (compared case-insensitively; "" for
// all), ordered by creation time, then ID.
func (t *Queries) ListRoleAssignments(principalID, workspace string) ([]*identity.RoleAssignment, error) {
	q, args := ListRoleAssignmentsQuery(principalID, workspace)
	rows, err := t.Q.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list role assignments: %w", err)
	}
	out, err := collect(rows, scanRoleAssignment)
	if err != nil {
		return nil, fmt.Errorf("store: list role assignments: %w", err)
	}
	return out, nil
}

// ListRoleAssignmentsQuery returns the query of ListRoleAssignments and its
// arguments. Its text depends only on which filters are set.
func ListRoleAssignmentsQuery(principalID, workspace string) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if principalID != "" {
		where = append(where, `principal_id = `+arg(principalID))
	}
	if workspace != "" {
		where = append(where, `workspace_key = `+arg(key(workspace)))
	}
	q := `SELECT ` + roleAssignmentColumns + ` FROM role_assignments`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	return q + ` ORDER BY created_on, id`, args
}

// InsertRoleAssignment adds an assignment; a zero CreatedOn takes the
// transaction time. Returns ECONFLICT if an assignment of that ID exists, or
// the principal already has the role (compared case-insensitively) in the
// workspace (compared case-insensitively).
func (t *Queries) InsertRoleAssignment(a *identity.RoleAssignment) error {
	if err := t.Writable("insert role assignment"); err != nil {
		return err
	}
	if a.CreatedOn.IsZero() {
		a.CreatedOn = t.Now
	}
	// Without a conflict target, DO NOTHING covers the ID and the grant
	// alike.
	res, err := t.Q.Exec(`INSERT INTO role_assignments (id, principal_id, role, role_key, workspace, workspace_key,
			created_on, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		a.ID, a.PrincipalID, a.Role, key(a.Role), a.Workspace, key(a.Workspace), micros(a.CreatedOn), a.CreatedBy)
	if err != nil {
		return fmt.Errorf("store: insert role assignment %q: %w", a.ID, err)
	}
	n, err := affected(res)
	if err != nil {
		return fmt.Errorf("store: insert role assignment %q: %w", a.ID, err)
	}
	if n == 0 {
		var one int
		err := t.Q.QueryRow(`SELECT 1 FROM role_assignments WHERE id = $1`, a.ID).Scan(&one)
		if err == nil {
			return core.Errorf(core.ECONFLICT, "role assignment %q already exists", a.ID)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: insert role assignment %q: %w", a.ID, err)
		}
		return core.Errorf(core.ECONFLICT, "%s already has role %q in workspace %q", a.PrincipalID, a.Role, a.Workspace)
	}
	normTime(&a.CreatedOn)
	return nil
}

// DeleteRoleAssignment removes an assignment by ID. Returns ENOTFOUND.
func (t *Queries) DeleteRoleAssignment(id string) error {
	return t.deleteOne(fmt.Sprintf("role assignment %q", id), fmt.Sprintf("role assignment %q not found", id),
		`DELETE FROM role_assignments WHERE id = $1`, id)
}
