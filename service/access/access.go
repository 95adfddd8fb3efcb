package access

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// CreateUser adds a user (administrators only).
func (s *Service) CreateUser(ctx context.Context, u *identity.User) (*identity.User, error) {
	if err := identity.RequireAdmin(ctx, "creating users"); err != nil {
		return nil, err
	}
	if err := identity.ValidateUserName(u.Name); err != nil {
		return nil, err
	}
	identity.SetAuditDetail(ctx, "user %s (admin %t)", u.Name, u.Admin)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		u.CreatedOn = tx.Now()
		return tx.InsertUser(u)
	})
	return u, err
}

// ListUsers lists users (administrators only).
func (s *Service) ListUsers(ctx context.Context) (out []*identity.User, err error) {
	if err := identity.RequireAdmin(ctx, "listing users"); err != nil {
		return nil, err
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = tx.ListUsers()
		return err
	})
	return out, err
}

// FindUser returns a user: administrators see anyone, users themselves.
func (s *Service) FindUser(ctx context.Context, name string) (u *identity.User, err error) {
	if p := identity.PrincipalFrom(ctx); p == nil || (!p.Admin && !strings.EqualFold(p.ID, "user:"+name)) {
		return nil, core.Errorf(core.EFORBIDDEN, "reading another user needs an administrator")
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		u, err = tx.GetUser(name)
		return err
	})
	return u, err
}

// SetUserDisabled disables or enables a user; a disabled user's tokens stop
// working at once, since every request re-reads the user.
func (s *Service) SetUserDisabled(ctx context.Context, name string, disabled bool) (*identity.User, error) {
	if err := identity.RequireAdmin(ctx, "disabling users"); err != nil {
		return nil, err
	}
	var u *identity.User
	identity.SetAuditDetail(ctx, "user %s disabled=%t", name, disabled)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		var err error
		if u, err = tx.GetUser(name); err != nil {
			return err
		}
		u.Disabled = disabled
		return tx.UpdateUser(u)
	})
	return u, err
}

// MaxTokenLifetime bounds --expires-in.
const MaxTokenLifetime = 366 * 24 * time.Hour

// CreateToken makes an API token for a user and returns it with the token
// itself, which is shown this once and stored only as a hash. Users may
// make tokens for themselves; administrators for anyone.
func (s *Service) CreateToken(ctx context.Context, user, name string, expiresIn time.Duration) (*identity.APIToken, string, error) {
	p := identity.PrincipalFrom(ctx)
	if p == nil || (!p.Admin && !strings.EqualFold(p.ID, "user:"+user)) {
		return nil, "", core.Errorf(core.EFORBIDDEN, "creating tokens for another user needs an administrator")
	}
	if p.AttemptID != "" {
		return nil, "", core.Errorf(core.EFORBIDDEN, "%s is a job's identity: it may not create API tokens, which would outlive the job", p.Name)
	}
	if err := identity.ValidateTokenName(name); err != nil {
		return nil, "", err
	}
	if expiresIn < 0 || expiresIn > MaxTokenLifetime {
		return nil, "", core.FieldErrorf("expires_in", "must be between 0 (never) and %d days", int(MaxTokenLifetime.Hours()/24))
	}
	var tok *identity.APIToken
	var plain string
	err := s.store.Update(ctx, func(tx store.Tx) error {
		u, err := tx.GetUser(user)
		if err != nil {
			return err
		}
		if u.Disabled {
			return core.Errorf(core.ECONFLICT, "user %s is disabled", u.Name)
		}
		t, hash, err := identity.NewToken()
		if err != nil {
			return err
		}
		tok = &identity.APIToken{ID: core.NewID(s.cfg.Random, "tok-"), Name: name, PrincipalID: u.PrincipalID(), Hash: hash, CreatedOn: tx.Now()}
		if expiresIn > 0 {
			exp := tx.Now().Add(expiresIn)
			tok.ExpiresOn = &exp
		}
		if err := checkTokenOutlives(p, tok.ExpiresOn, tx.Now()); err != nil {
			return err
		}
		plain = t
		identity.SetAuditDetail(ctx, "token %s (%s) for %s", tok.ID, name, u.PrincipalID())
		return tx.InsertToken(tok)
	})
	return tok, plain, err
}

// checkTokenOutlives refuses a token (expiring at exp, nil for never)
// that would outlive the token of the request that mints it: otherwise a
// stolen short-lived token (a studio session's) buys a lasting one.
func checkTokenOutlives(p *identity.Principal, exp *time.Time, now time.Time) error {
	if p.ExpiresOn == nil || (exp != nil && !exp.After(*p.ExpiresOn)) {
		return nil
	}
	left := p.ExpiresOn.Sub(now).Truncate(time.Second)
	if exp == nil {
		return core.FieldErrorf("expires_in", "a token that never expires would outlive the token this request is made with, which expires at %s; ask for at most %s, or use a token without expiry",
			p.ExpiresOn.UTC().Format(time.RFC3339), left)
	}
	return core.FieldErrorf("expires_in", "the new token would expire at %s, after the token this request is made with (%s); ask for at most %s",
		exp.UTC().Format(time.RFC3339), p.ExpiresOn.UTC().Format(time.RFC3339), left)
}

// ListTokens lists a user's tokens (never the tokens themselves).
func (s *Service) ListTokens(ctx context.Context, user string) (out []*identity.APIToken, err error) {
	p := identity.PrincipalFrom(ctx)
	principal := ""
	if user != "" {
		principal = "user:" + strings.ToLower(user)
	}
	if p == nil || (!p.Admin && (principal == "" || !strings.EqualFold(p.ID, principal))) {
		return nil, core.Errorf(core.EFORBIDDEN, "listing another user's tokens needs an administrator")
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		if principal != "" {
			u, err := tx.GetUser(user)
			if err != nil {
				return err
			}
			principal = u.PrincipalID()
		}
		out, err = tx.ListTokens(principal)
		return err
	})
	return out, err
}

// RevokeToken revokes a token at once: its owner or an administrator.
func (s *Service) RevokeToken(ctx context.Context, id string) (*identity.APIToken, error) {
	p := identity.PrincipalFrom(ctx)
	if p != nil && p.AttemptID != "" {
		return nil, core.Errorf(core.EFORBIDDEN, "%s is a job's identity: it may not revoke its user's API tokens", p.Name)
	}
	var tok *identity.APIToken
	err := s.store.Update(ctx, func(tx store.Tx) error {
		var err error
		if tok, err = tx.GetToken(id); err != nil {
			return err
		}
		if p == nil || (!p.Admin && !strings.EqualFold(p.ID, tok.PrincipalID)) {
			return core.Errorf(core.EFORBIDDEN, "revoking another user's token needs an administrator")
		}
		tok.Revoked = true
		identity.SetAuditDetail(ctx, "token %s (%s) of %s revoked", tok.ID, tok.Name, tok.PrincipalID)
		return tx.UpdateToken(tok)
	})
	return tok, err
}

// CreateIdentity adds a user-assigned managed identity (administrators only).
func (s *Service) CreateIdentity(ctx context.Context, name string) (*identity.Identity, error) {
	if err := identity.RequireAdmin(ctx, "creating identities"); err != nil {
		return nil, err
	}
	if err := identity.ValidateIdentityName(name); err != nil {
		return nil, err
	}
	id := &identity.Identity{Name: name, ClientID: newClientID(s.cfg.Random)}
	identity.SetAuditDetail(ctx, "identity %s", name)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		id.CreatedOn = tx.Now()
		return tx.InsertIdentity(id)
	})
	return id, err
}

// newClientID returns a random GUID-shaped client ID, as Azure's.
func newClientID(r interface{ Read([]byte) (int, error) }) string {
	b := make([]byte, 16)
	_, _ = r.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// SystemIdentityName names a compute's system-assigned identity.
func SystemIdentityName(workspace, compute string) string {
	return strings.ToLower(workspace) + "." + strings.ToLower(compute)
}

// identityNameOf reads an identity name from a resource ID: either the
// name itself or an Azure-style ID ending in /userAssignedIdentities/<name>.
func identityNameOf(resourceID string) string {
	if i := strings.LastIndex(resourceID, "/"); i >= 0 {
		return resourceID[i+1:]
	}
	return resourceID
}

// EnsureComputeIdentities checks that a compute's user-assigned identities
// exist and creates its system-assigned one, in the compute's transaction.
//
// A user-assigned identity may be attached by an administrator, or in a
// workspace where it has been granted a role: identities are created by
// administrators for the whole server, and granting one a role in a
// workspace is what makes it usable there (as Azure asks for a role on
// the identity itself).
func (s *Service) EnsureComputeIdentities(ctx context.Context, tx store.Tx, ws string, spec *compute.ComputeSpec) error {
	if spec.Identity == nil {
		return nil
	}
	p := identity.PrincipalFrom(ctx)
	for i, u := range spec.Identity.UserAssignedIdentities {
		field := fmt.Sprintf("identity.user_assigned_identities[%d].resource_id", i)
		id, err := tx.GetIdentity(identityNameOf(u.ResourceID))
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.FieldErrorf(field,
				"no identity named %q; an administrator creates it with `shoal identity create --name %s`", identityNameOf(u.ResourceID), identityNameOf(u.ResourceID))
		} else if err != nil {
			return err
		}
		if p != nil && !p.Admin {
			granted, err := tx.ListRoleAssignments(id.PrincipalID(), ws)
			if err != nil {
				return err
			}
			if len(granted) == 0 {
				return &core.Error{Code: core.EFORBIDDEN, Field: field, Message: fmt.Sprintf(
					"%s: identity %s has no role in workspace %s, so it cannot be attached here; an Owner grants it one first (`shoal role assign --identity %s --role ...`)", field, id.Name, ws, id.Name)}
			}
		}
		spec.Identity.UserAssignedIdentities[i].ClientID = id.ClientID
		spec.Identity.UserAssignedIdentities[i].PrincipalID = id.PrincipalID()
	}
	if strings.Contains(spec.Identity.Type, compute.IdentitySystemAssigned) {
		name := SystemIdentityName(ws, spec.Name)
		id, err := tx.GetIdentity(name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			id = &identity.Identity{Name: name, ClientID: newClientID(s.cfg.Random), System: true, CreatedOn: tx.Now()}
			if err := tx.InsertIdentity(id); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		spec.Identity.PrincipalID = id.PrincipalID()
		spec.Identity.TenantID = "shoal"
	}
	return nil
}

// CreateRole adds a custom role (administrators only).
func (s *Service) CreateRole(ctx context.Context, r *identity.RoleDefinition) (*identity.RoleDefinition, error) {
	if err := identity.RequireAdmin(ctx, "defining roles"); err != nil {
		return nil, err
	}
	if err := identity.ValidateRoleDefinition(r); err != nil {
		return nil, err
	}
	r.BuiltIn = false
	identity.SetAuditDetail(ctx, "role %s: actions %v, not actions %v", r.Name, r.Actions, r.NotActions)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		r.CreatedOn = tx.Now()
		return tx.InsertRole(r)
	})
	return r, err
}

// ListRoles returns the built-in and custom roles.
func (s *Service) ListRoles(ctx context.Context) ([]*identity.RoleDefinition, error) {
	out := identity.BuiltinRoles()
	err := s.store.View(ctx, func(tx store.Tx) error {
		custom, err := tx.ListRoles()
		out = append(out, custom...)
		return err
	})
	return out, err
}

func (s *Service) roleByName(tx store.Tx, name string) (*identity.RoleDefinition, error) {
	for _, r := range identity.BuiltinRoles() {
		if strings.EqualFold(r.Name, name) {
			return r, nil
		}
	}
	r, err := tx.GetRole(name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.FieldErrorf("role", "no role named %q; see `shoal role list`", name)
	}
	return r, err
}

// resolvePrincipal checks that a principal ID names an existing user or
// identity and returns it in canonical form.
func resolvePrincipal(tx store.Tx, principalID string) (string, error) {
	kind, name, _ := strings.Cut(principalID, ":")
	switch kind {
	case "user":
		u, err := tx.GetUser(name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return "", core.FieldErrorf("user", "no user named %q", name)
		} else if err != nil {
			return "", err
		}
		return u.PrincipalID(), nil
	case "identity":
		i, err := tx.GetIdentity(name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return "", core.FieldErrorf("identity", "no identity named %q", name)
		} else if err != nil {
			return "", err
		}
		return i.PrincipalID(), nil
	case "sp":
		sp, err := tx.GetServicePrincipal(name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return "", core.FieldErrorf("service_principal", "no service principal named %q", name)
		} else if err != nil {
			return "", err
		}
		return sp.PrincipalID(), nil
	}
	return "", core.FieldErrorf("principal", "%q must be user:<name>, identity:<name> or sp:<name>", principalID)
}

// AssignRole grants a role to a principal in a workspace; the caller needs
// roles/write there (Owner) or to be an administrator.
func (s *Service) AssignRole(ctx context.Context, principalID, role, workspace string) (*identity.RoleAssignment, error) {
	if err := s.Authorize(ctx, identity.PrincipalFrom(ctx), workspace, identity.ActRolesWrite); err != nil {
		return nil, err
	}
	var a *identity.RoleAssignment
	err := s.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(workspace); err != nil {
			if core.ErrorCode(err) == core.ENOTFOUND {
				return core.WorkspaceNotFound(workspace)
			}
			return err
		}
		pid, err := resolvePrincipal(tx, principalID)
		if err != nil {
			return err
		}
		r, err := s.roleByName(tx, role)
		if err != nil {
			return err
		}
		a = &identity.RoleAssignment{ID: core.NewID(s.cfg.Random, "ra-"), PrincipalID: pid, Role: r.Name, Workspace: workspace, CreatedOn: tx.Now(), CreatedBy: identity.ActorName(ctx)}
		identity.SetAuditDetail(ctx, "%s granted %s in workspace %s", pid, r.Name, workspace)
		return tx.InsertRoleAssignment(a)
	})
	return a, err
}

// UnassignRole removes a principal's role in a workspace.
func (s *Service) UnassignRole(ctx context.Context, principalID, role, workspace string) error {
	if err := s.Authorize(ctx, identity.PrincipalFrom(ctx), workspace, identity.ActRolesWrite); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		pid, err := resolvePrincipal(tx, principalID)
		if err != nil {
			return err
		}
		list, err := tx.ListRoleAssignments(pid, workspace)
		if err != nil {
			return err
		}
		for _, a := range list {
			if strings.EqualFold(a.Role, role) {
				identity.SetAuditDetail(ctx, "%s no longer %s in workspace %s", pid, a.Role, workspace)
				return tx.DeleteRoleAssignment(a.ID)
			}
		}
		return core.Errorf(core.ENOTFOUND, "%s has no role %s in workspace %s", pid, role, workspace)
	})
}

// ListRoleAssignments lists assignments in a workspace ("" = all, admins only).
func (s *Service) ListRoleAssignments(ctx context.Context, workspace string) (out []*identity.RoleAssignment, err error) {
	if workspace == "" {
		if err := identity.RequireAdmin(ctx, "listing assignments of every workspace"); err != nil {
			return nil, err
		}
	} else if err := s.Authorize(ctx, identity.PrincipalFrom(ctx), workspace, identity.ActRolesRead); err != nil {
		return nil, err
	}
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = tx.ListRoleAssignments("", workspace)
		return err
	})
	return out, err
}
