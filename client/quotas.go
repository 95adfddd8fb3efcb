package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/money"
)

// ListQuotas lists a workspace's limit and use of each VM family at a
// location ("" for the default one).
func (c *Client) ListQuotas(ctx context.Context, workspace, location string) ([]money.WorkspaceQuota, error) {
	var out listBody[money.WorkspaceQuota]
	path := wsPath(workspace) + "/quotas"
	if location != "" {
		path += "?location=" + url.QueryEscape(location)
	}
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// SetQuota sets a workspace's vCPU limit of a VM family at a location.
func (c *Client) SetQuota(ctx context.Context, workspace, location, family string, limit int) (*money.QuotaUpdateResult, error) {
	var out money.QuotaUpdateResult
	path := wsPath(workspace) + "/quotas/" + url.PathEscape(family)
	if location != "" {
		path += "?location=" + url.QueryEscape(location)
	}
	if _, err := c.do(ctx, http.MethodPut, path, QuotaSetRequest{Limit: &limit}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
