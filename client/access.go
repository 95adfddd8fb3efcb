package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/identity"
)

// Whoami returns the caller and its role assignments.
func (c *Client) Whoami(ctx context.Context) (*identity.Whoami, error) {
	var out identity.Whoami
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/whoami", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateUser creates a user.
func (c *Client) CreateUser(ctx context.Context, u *identity.User) (*identity.User, error) {
	var out identity.User
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/users", u, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListUsers lists users.
func (c *Client) ListUsers(ctx context.Context) ([]*identity.User, error) {
	var out listBody[*identity.User]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/users", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetUser returns a user.
func (c *Client) GetUser(ctx context.Context, name string) (*identity.User, error) {
	var out identity.User
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/users/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetUserDisabled disables or enables a user.
func (c *Client) SetUserDisabled(ctx context.Context, name string, disabled bool) (*identity.User, error) {
	verb := "enable"
	if disabled {
		verb = "disable"
	}
	var out identity.User
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/users/"+url.PathEscape(name)+"/"+verb, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateToken creates an API token; expiresIn is a Go duration or "".
func (c *Client) CreateToken(ctx context.Context, user, name, expiresIn string) (*TokenCreateResponse, error) {
	var out TokenCreateResponse
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/users/"+url.PathEscape(user)+"/tokens", TokenCreateRequest{Name: name, ExpiresIn: expiresIn}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTokens lists a user's tokens.
func (c *Client) ListTokens(ctx context.Context, user string) ([]*identity.APIToken, error) {
	var out listBody[*identity.APIToken]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/users/"+url.PathEscape(user)+"/tokens", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// RevokeToken revokes a token.
func (c *Client) RevokeToken(ctx context.Context, id string) (*identity.APIToken, error) {
	var out identity.APIToken
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/tokens/"+url.PathEscape(id)+"/revoke", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListRoles lists roles.
func (c *Client) ListRoles(ctx context.Context) ([]*identity.RoleDefinition, error) {
	var out listBody[*identity.RoleDefinition]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/roles", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// CreateRole defines a custom role.
func (c *Client) CreateRole(ctx context.Context, r *identity.RoleDefinition) (*identity.RoleDefinition, error) {
	var out identity.RoleDefinition
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/roles", r, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AssignRole grants a role in a workspace.
func (c *Client) AssignRole(ctx context.Context, workspace, principal, role string) (*identity.RoleAssignment, error) {
	var out identity.RoleAssignment
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/roleassignments", AssignmentRequest{Principal: principal, Role: role}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UnassignRole removes a role in a workspace.
func (c *Client) UnassignRole(ctx context.Context, workspace, principal, role string) error {
	q := url.Values{"principal": {principal}, "role": {role}}
	_, err := c.do(ctx, http.MethodDelete, wsPath(workspace)+"/roleassignments?"+q.Encode(), nil, nil, nil)
	return err
}

// ListAssignments lists a workspace's role assignments.
func (c *Client) ListAssignments(ctx context.Context, workspace string) ([]*identity.RoleAssignment, error) {
	var out listBody[*identity.RoleAssignment]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/roleassignments", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// CreateIdentity creates a user-assigned identity.
func (c *Client) CreateIdentity(ctx context.Context, name string) (*identity.Identity, error) {
	var out identity.Identity
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/identities", IdentityCreateRequest{Name: name}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListIdentities lists identities.
func (c *Client) ListIdentities(ctx context.Context) ([]*identity.Identity, error) {
	var out listBody[*identity.Identity]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/identities", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// ListAudit lists audit records.
func (c *Client) ListAudit(ctx context.Context, since, principal, target string) ([]*identity.AuditRecord, error) {
	q := url.Values{}
	for k, v := range map[string]string{"since": since, "principal": principal, "target": target} {
		if v != "" {
			q.Set(k, v)
		}
	}
	path := "/api/v1/audit"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out listBody[*identity.AuditRecord]
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
