package client

import (
	"context"
	"net/http"

	"github.com/shoal-ml/shoal"
)

// GetWorkspaceLimits returns a workspace's limits and storage use.
func (c *Client) GetWorkspaceLimits(ctx context.Context, workspace string) (*shoal.WorkspaceLimitsView, error) {
	var out shoal.WorkspaceLimitsView
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/limits", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateWorkspaceLimits sets a workspace's limits (administrators).
func (c *Client) UpdateWorkspaceLimits(ctx context.Context, workspace string, upd *WorkspaceLimitsUpdate) (*shoal.WorkspaceLimitsView, error) {
	var out shoal.WorkspaceLimitsView
	if _, err := c.do(ctx, http.MethodPatch, wsPath(workspace)+"/limits", upd, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
