package client

import (
	"context"
	"net/http"

	"github.com/shoal-ml/shoal/domain/money"
)

// GetWorkspaceLimits returns a workspace's limits and storage use.
func (c *Client) GetWorkspaceLimits(ctx context.Context, workspace string) (*money.WorkspaceLimitsView, error) {
	var out money.WorkspaceLimitsView
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/limits", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateWorkspaceLimits sets a workspace's limits (administrators).
func (c *Client) UpdateWorkspaceLimits(ctx context.Context, workspace string, upd *WorkspaceLimitsUpdate) (*money.WorkspaceLimitsView, error) {
	var out money.WorkspaceLimitsView
	if _, err := c.do(ctx, http.MethodPatch, wsPath(workspace)+"/limits", upd, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
