package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/asset"
)

// PutDatastore creates or replaces a workspace's datastore from its
// document (the YAML's keys as JSON, credentials included) and reports
// whether it was created; the answer never holds the credentials.
func (c *Client) PutDatastore(ctx context.Context, workspace, name string, doc json.RawMessage) (*asset.Datastore, bool, error) {
	var out asset.Datastore
	status, err := c.do(ctx, http.MethodPut, wsPath(workspace)+"/datastores/"+url.PathEscape(name), doc, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// ListDatastores lists a workspace's datastores, the built-ins included,
// without credentials.
func (c *Client) ListDatastores(ctx context.Context, workspace string) ([]*asset.Datastore, error) {
	var out listBody[*asset.Datastore]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/datastores", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetDatastore shows a workspace's datastore, without credentials.
func (c *Client) GetDatastore(ctx context.Context, workspace, name string) (*asset.Datastore, error) {
	var out asset.Datastore
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/datastores/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDatastore deletes a workspace's datastore.
func (c *Client) DeleteDatastore(ctx context.Context, workspace, name string) error {
	_, err := c.do(ctx, http.MethodDelete, wsPath(workspace)+"/datastores/"+url.PathEscape(name), nil, nil, nil)
	return err
}
