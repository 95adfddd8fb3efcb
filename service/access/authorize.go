package access

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/store"
)

// serverActions are the actions that only administrators hold.
var serverActions = map[string]bool{
	identity.ActUsersRead: true, identity.ActUsersWrite: true, identity.ActIdentitiesWrite: true,
}

// Authorize decides whether p may do action in workspace (""for actions
// that are not about one workspace). Deny by default: only an
// administrator, or a role assigned to the principal in that workspace
// that grants the action, allows it. A workload identity is further bound
// by its submitter: it never holds a right the submitter lacks.
func (s *Service) Authorize(ctx context.Context, p *identity.Principal, workspace, action string) error {
	if p == nil {
		return core.Errorf(core.EUNAUTHORIZED, "authentication required")
	}
	if p.Scope != "" && action != identity.ActBatchEndpointsInvoke {
		// An invoke token (identity.InvokeScope) does one thing, through
		// every door (MLflow and the Blob endpoint authorize here too).
		return core.Errorf(core.EFORBIDDEN, "this token may only invoke batch endpoint %s, not %s", strings.TrimPrefix(p.Scope, "workspaces/"), action)
	}
	if p.Admin {
		return nil
	}
	if p.Kind == identity.PrincipalNode {
		return core.Errorf(core.EFORBIDDEN, "a node credential can only be used by the node's agent")
	}
	if serverActions[action] || workspace == "" {
		return core.Errorf(core.EFORBIDDEN, "%s is not allowed: %s needs an administrator", p.Name, action)
	}
	ok, err := s.allowedIn(ctx, p.ID, workspace, action)
	if err != nil {
		return err
	}
	if !ok {
		return core.Errorf(core.EFORBIDDEN, "%s may not %s in workspace %s: no role assigned there grants it", p.Name, action, workspace)
	}
	if p.Kind == identity.PrincipalIdentity && p.OnBehalfOf != "" && p.OnBehalfOf != "admin" {
		ok, err := s.allowedIn(ctx, p.OnBehalfOf, workspace, action)
		if err != nil {
			return err
		}
		if !ok {
			return core.Errorf(core.EFORBIDDEN, "%s may not %s in workspace %s: the job's submitter %s may not, and a workload never gets more than its submitter", p.Name, action, workspace, p.OnBehalfOf)
		}
	}
	return nil
}

// allowedIn reports whether a principal's roles in a workspace grant action.
func (s *Service) allowedIn(ctx context.Context, principalID, workspace, action string) (bool, error) {
	allowed := false
	err := s.store.View(ctx, func(tx store.Tx) error {
		if strings.HasPrefix(principalID, "user:") {
			u, err := tx.GetUser(strings.TrimPrefix(principalID, "user:"))
			if err != nil {
				return nil // a deleted submitter grants nothing
			}
			if u.Admin && !u.Disabled {
				allowed = true
				return nil
			}
			if u.Disabled {
				return nil
			}
		}
		list, err := tx.ListRoleAssignments(principalID, workspace)
		if err != nil {
			return err
		}
		for _, a := range list {
			r, err := s.roleByName(tx, a.Role)
			if err != nil {
				continue // a role deleted since; grants nothing
			}
			if r.Allows(action) {
				allowed = true
				return nil
			}
		}
		return nil
	})
	return allowed, err
}

// AuthenticateToken resolves an API token to its principal; the user is
// re-read on every request so that disabling a user, or revoking a token,
// takes effect at once.
func (s *Service) authenticateUserToken(tx store.Tx, t *identity.APIToken) (*identity.Principal, error) {
	if t.PrincipalID == adminPrincipal.ID {
		return adminPrincipal, nil
	}
	name, ok := strings.CutPrefix(t.PrincipalID, "user:")
	if !ok {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the token's principal %q is unknown", t.PrincipalID)
	}
	u, err := tx.GetUser(name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.EUNAUTHORIZED, "the token's user no longer exists")
	} else if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, core.Errorf(core.EUNAUTHORIZED, "user %s is disabled", u.Name)
	}
	return &identity.Principal{ID: u.PrincipalID(), Name: u.Name, Kind: identity.PrincipalUser, Admin: u.Admin}, nil
}

// FindWhoami returns the caller and its role assignments.
func (s *Service) FindWhoami(ctx context.Context) (*identity.Whoami, error) {
	p := identity.PrincipalFrom(ctx)
	if p == nil {
		return nil, core.Errorf(core.EUNAUTHORIZED, "authentication required")
	}
	w := &identity.Whoami{Principal: p, Assignments: []*identity.RoleAssignment{}}
	err := s.store.View(ctx, func(tx store.Tx) error {
		list, err := tx.ListRoleAssignments(p.ID, "")
		if list != nil {
			w.Assignments = list
		}
		return err
	})
	return w, err
}
