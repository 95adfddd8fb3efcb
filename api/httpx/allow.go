package httpx

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// Pseudo-actions for routes that are not one workspace action.
const (
	// ActionAuthenticated: any authenticated principal (catalogs, lists
	// whose service filters by the caller).
	ActionAuthenticated = "authenticated"
	// ActionSelfOrAdmin: the path's {user} is the caller, or an admin.
	ActionSelfOrAdmin = "self-or-admin"
	// ActionLogin: any authenticated principal; recorded as a login.
	ActionLogin = "login"
)

// Authorizer decides a workspace action (service.Services does); an
// interface so that this package stays below the services' users.
type Authorizer interface {
	Authorize(ctx context.Context, p *identity.Principal, ws, action string) error
}

// Allow is the one authorization decision, for the API's routes and the
// studio's pages alike: may p do action (a route's declared action or one
// of the Action* pseudo-actions) in workspace ws ("" for a route without
// {ws}), on user (the path's {user}, for ActionSelfOrAdmin)? Nil when it
// may; EUNAUTHORIZED or EFORBIDDEN otherwise.
func Allow(ctx context.Context, authz Authorizer, p *identity.Principal, action, ws, user string) error {
	if p != nil && p.Scope != "" && action != identity.ActBatchEndpointsInvoke {
		// An invoke token (identity.InvokeScope) does one thing; which
		// endpoint, the route's authorization checks (ScopeAllows).
		return core.Errorf(core.EFORBIDDEN, "this token may only invoke batch endpoint %s, not %s", strings.TrimPrefix(p.Scope, "workspaces/"), action)
	}
	switch action {
	case ActionAuthenticated, ActionLogin:
		if p == nil {
			return core.Errorf(core.EUNAUTHORIZED, "authentication required")
		}
		if p.Kind == identity.PrincipalNode {
			return core.Errorf(core.EFORBIDDEN, "a node credential can only be used by the node's agent")
		}
		return nil
	case ActionSelfOrAdmin:
		if p == nil {
			return core.Errorf(core.EUNAUTHORIZED, "authentication required")
		}
		if !p.Admin && !strings.EqualFold(p.ID, "user:"+user) {
			return core.Errorf(core.EFORBIDDEN, "%s may act only on its own user", p.Name)
		}
		if p.AttemptID != "" {
			// A job acting as its submitter (user_identity) acts in
			// workspaces only: never on the user's account (its tokens).
			return core.Errorf(core.EFORBIDDEN, "%s is a job's identity: it may not act on its user's account", p.Name)
		}
		return nil
	}
	if err := jobUserLimits(p, action, ws); err != nil {
		return err
	}
	return authz.Authorize(ctx, p, ws, action)
}

// jobActsNot are what a job acting as its submitter (user_identity) may
// not do even where its submitter may: grant roles, and get or leave
// credentials that outlive its attempt (a datastore's secrets, a
// workspace's SAS, code uploads' SAS, a registry's login, an identity,
// a machine joined to a cluster with a node credential of its own) or
// change workspaces.
var jobActsNot = map[string]bool{
	identity.ActRolesWrite: true, identity.ActDatastoresWrite: true, identity.ActCodesWrite: true,
	identity.ActWorkspacesWrite: true, identity.ActTokensWrite: true,
	identity.ActRegistriesWrite: true, identity.ActIdentitiesWrite: true, identity.ActComputesJoinNode: true,
}

// jobUserLimits bounds a job's user identity: its job's workspace only,
// and none of jobActsNot.
func jobUserLimits(p *identity.Principal, action, ws string) error {
	if p == nil || p.AttemptID == "" || p.Kind != identity.PrincipalUser {
		return nil
	}
	if jobActsNot[action] {
		return core.Errorf(core.EFORBIDDEN, "%s is a job's identity: it may not %s (it would grant or take what outlives the job)", p.Name, action)
	}
	if p.Workspace != "" && ws != "" && !strings.EqualFold(ws, p.Workspace) {
		return core.Errorf(core.EFORBIDDEN, "%s is a job's identity: it acts in workspace %s only", p.Name, p.Workspace)
	}
	return nil
}
