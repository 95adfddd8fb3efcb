package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/money"
)

// CostReport reads the cost report.
func (c *Client) CostReport(ctx context.Context, workspace, since, groupBy string) ([]money.CostLine, error) {
	q := url.Values{}
	if since != "" {
		q.Set("since", since)
	}
	if groupBy != "" {
		q.Set("group_by", groupBy)
	}
	var out listBody[money.CostLine]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/cost?"+q.Encode(), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
