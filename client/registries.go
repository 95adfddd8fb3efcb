package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/asset"
)

// AddRegistry adds (or replaces) a workspace's registry login; the
// answer never holds the password.
func (c *Client) AddRegistry(ctx context.Context, workspace string, req *asset.RegistryAdd) (*asset.Registry, error) {
	var out asset.Registry
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/registries", req, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListRegistries lists a workspace's registry logins, without passwords.
func (c *Client) ListRegistries(ctx context.Context, workspace string) ([]*asset.Registry, error) {
	var out listBody[*asset.Registry]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/registries", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// RemoveRegistry removes a workspace's registry login.
func (c *Client) RemoveRegistry(ctx context.Context, workspace, server string) error {
	_, err := c.do(ctx, http.MethodDelete, wsPath(workspace)+"/registries/"+url.PathEscape(server), nil, nil, nil)
	return err
}
