package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/shoal-ml/shoal/domain/batch"
	"github.com/shoal-ml/shoal/domain/job"
)

// batchPath is a batch endpoint's path.
func batchPath(workspace, endpoint string) string {
	return wsPath(workspace) + "/batch-endpoints/" + url.PathEscape(endpoint)
}

// PutBatchEndpoint creates or updates a batch endpoint from its document
// (the YAML's keys as JSON) and reports whether it was created.
func (c *Client) PutBatchEndpoint(ctx context.Context, workspace, name string, doc json.RawMessage) (*batch.Endpoint, bool, error) {
	var out batch.Endpoint
	status, err := c.do(ctx, http.MethodPut, batchPath(workspace, name), doc, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// GetBatchEndpoint shows a batch endpoint.
func (c *Client) GetBatchEndpoint(ctx context.Context, workspace, name string) (*batch.Endpoint, error) {
	var out batch.Endpoint
	if _, err := c.do(ctx, http.MethodGet, batchPath(workspace, name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBatchEndpoints lists a workspace's batch endpoints.
func (c *Client) ListBatchEndpoints(ctx context.Context, workspace string) ([]*batch.Endpoint, error) {
	var out listBody[*batch.Endpoint]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/batch-endpoints", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// DeleteBatchEndpoint deletes a batch endpoint and its deployments.
func (c *Client) DeleteBatchEndpoint(ctx context.Context, workspace, name string) error {
	_, err := c.do(ctx, http.MethodDelete, batchPath(workspace, name), nil, nil, nil)
	return err
}

// InvokeBatchEndpoint starts a job scoring inv's input.
func (c *Client) InvokeBatchEndpoint(ctx context.Context, workspace, name string, inv *batch.Invocation) (*job.Job, error) {
	var out job.Job
	if _, err := c.do(ctx, http.MethodPost, batchPath(workspace, name)+"/invoke", inv, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBatchEndpointJobs lists the jobs an endpoint's invocations started.
func (c *Client) ListBatchEndpointJobs(ctx context.Context, workspace, name string) ([]*job.Job, error) {
	var out listBody[*job.Job]
	if _, err := c.do(ctx, http.MethodGet, batchPath(workspace, name)+"/jobs", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// PutBatchDeployment creates or updates an endpoint's deployment from
// its document (code an uploaded folder's id); setDefault makes it the
// endpoint's default.
func (c *Client) PutBatchDeployment(ctx context.Context, workspace, endpoint, name string, doc json.RawMessage, setDefault bool) (*batch.Deployment, bool, error) {
	var out batch.Deployment
	p := batchPath(workspace, endpoint) + "/deployments/" + url.PathEscape(name)
	if setDefault {
		p += "?set_default=true"
	}
	status, err := c.do(ctx, http.MethodPut, p, doc, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// GetBatchDeployment shows an endpoint's deployment.
func (c *Client) GetBatchDeployment(ctx context.Context, workspace, endpoint, name string) (*batch.Deployment, error) {
	var out batch.Deployment
	if _, err := c.do(ctx, http.MethodGet, batchPath(workspace, endpoint)+"/deployments/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBatchDeployments lists an endpoint's deployments.
func (c *Client) ListBatchDeployments(ctx context.Context, workspace, endpoint string) ([]*batch.Deployment, error) {
	var out listBody[*batch.Deployment]
	if _, err := c.do(ctx, http.MethodGet, batchPath(workspace, endpoint)+"/deployments", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// DeleteBatchDeployment deletes an endpoint's deployment.
func (c *Client) DeleteBatchDeployment(ctx context.Context, workspace, endpoint, name string) error {
	_, err := c.do(ctx, http.MethodDelete, batchPath(workspace, endpoint)+"/deployments/"+url.PathEscape(name), nil, nil, nil)
	return err
}

// InvokeToken is a new invoke token: the token's record and its secret,
// shown once.
type InvokeToken struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Scope     string     `json:"scope"`
	ExpiresOn *time.Time `json:"expires_on,omitempty"`
	Token     string     `json:"token"`
}

// CreateInvokeToken makes a token that may only invoke the endpoint,
// acting as the caller; expiresInDays 0 never expires.
func (c *Client) CreateInvokeToken(ctx context.Context, workspace, name string, expiresInDays int) (*InvokeToken, error) {
	var out InvokeToken
	body := map[string]int{"expires_in_days": expiresInDays}
	if _, err := c.do(ctx, http.MethodPost, batchPath(workspace, name)+"/tokens", body, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
