package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/shoal-ml/shoal/domain/notify"
)

// Webhooks: Owners alone may call these (the server answers 403 to
// anyone else).

func webhookPath(workspace, name string) string {
	return wsPath(workspace) + "/webhooks/" + url.PathEscape(name)
}

// CreateWebhook registers a webhook; the answer carries its signing
// secret, which no later call shows again.
func (c *Client) CreateWebhook(ctx context.Context, workspace string, req *notify.WebhookCreate) (*notify.WebhookCreated, error) {
	var out notify.WebhookCreated
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/webhooks", req, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListWebhooks lists a workspace's webhooks (never their secrets).
func (c *Client) ListWebhooks(ctx context.Context, workspace string) ([]*notify.Webhook, error) {
	var out listBody[*notify.Webhook]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/webhooks", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetWebhook shows a webhook (never its secret).
func (c *Client) GetWebhook(ctx context.Context, workspace, name string) (*notify.Webhook, error) {
	var out notify.Webhook
	if _, err := c.do(ctx, http.MethodGet, webhookPath(workspace, name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteWebhook deletes a webhook and its deliveries.
func (c *Client) DeleteWebhook(ctx context.Context, workspace, name string) error {
	_, err := c.do(ctx, http.MethodDelete, webhookPath(workspace, name), nil, nil, nil)
	return err
}

// WebhookDeliveries lists a webhook's deliveries, newest first, at most
// limit (0: the server's cap).
func (c *Client) WebhookDeliveries(ctx context.Context, workspace, name string, limit int) ([]*notify.Delivery, error) {
	path := webhookPath(workspace, name) + "/deliveries"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	var out listBody[*notify.Delivery]
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// TestWebhook queues a signed ping delivery to a webhook.
func (c *Client) TestWebhook(ctx context.Context, workspace, name string) (*notify.Delivery, error) {
	var out notify.Delivery
	if _, err := c.do(ctx, http.MethodPost, webhookPath(workspace, name)+"/test", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateWebhookSecret gives a webhook a new secret, answered this once.
func (c *Client) RotateWebhookSecret(ctx context.Context, workspace, name string) (*notify.WebhookCreated, error) {
	var out notify.WebhookCreated
	if _, err := c.do(ctx, http.MethodPost, webhookPath(workspace, name)+"/rotate-secret", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
