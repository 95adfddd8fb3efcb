package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal"
)

// CostReport reads the cost report.
func (c *Client) CostReport(ctx context.Context, workspace, since, groupBy string) ([]shoal.CostLine, error) {
	q := url.Values{}
	if since != "" {
		q.Set("since", since)
	}
	if groupBy != "" {
		q.Set("group_by", groupBy)
	}
	var out listBody[shoal.CostLine]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/cost?"+q.Encode(), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
