package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/identity"
)

// CreateServicePrincipal creates a service principal; the answer holds its
// secret, which is never shown again.
func (c *Client) CreateServicePrincipal(ctx context.Context, name, description string) (*SPCredentials, error) {
	var out SPCredentials
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/serviceprincipals", SPCreateRequest{Name: name, Description: description}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListServicePrincipals lists service principals.
func (c *Client) ListServicePrincipals(ctx context.Context) ([]*identity.ServicePrincipal, error) {
	var out listBody[*identity.ServicePrincipal]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/serviceprincipals", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetServicePrincipal returns a service principal.
func (c *Client) GetServicePrincipal(ctx context.Context, name string) (*identity.ServicePrincipal, error) {
	var out identity.ServicePrincipal
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/serviceprincipals/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResetServicePrincipalSecret gives a service principal a new secret.
func (c *Client) ResetServicePrincipalSecret(ctx context.Context, name string) (*SPCredentials, error) {
	var out SPCredentials
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/serviceprincipals/"+url.PathEscape(name)+"/secret", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteServicePrincipal deletes a service principal and its role assignments.
func (c *Client) DeleteServicePrincipal(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/v1/serviceprincipals/"+url.PathEscape(name), nil, nil, nil)
	return err
}
