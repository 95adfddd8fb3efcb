package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// ApplyCompute sends a compute document (JSON with the YAML keys) to create
// or apply it. It reports whether the compute was created.
func (c *Client) ApplyCompute(ctx context.Context, workspace, name string, doc json.RawMessage, ifMatch string) (*compute.Compute, bool, error) {
	var out compute.Compute
	status, err := c.do(ctx, http.MethodPut, wsPath(workspace)+"/computes/"+url.PathEscape(name), doc, map[string]string{"If-Match": ifMatch}, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// UpdateCompute applies a partial update of mutable fields.
func (c *Client) UpdateCompute(ctx context.Context, workspace, name string, upd *compute.ComputeUpdate, ifMatch string) (*compute.Compute, error) {
	var out compute.Compute
	_, err := c.do(ctx, http.MethodPatch, wsPath(workspace)+"/computes/"+url.PathEscape(name), upd, map[string]string{"If-Match": ifMatch}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetCompute returns one compute.
func (c *Client) GetCompute(ctx context.Context, workspace, name string) (*compute.Compute, error) {
	var out compute.Compute
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/computes/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListComputes returns a workspace's computes, optionally of one type.
func (c *Client) ListComputes(ctx context.Context, workspace, computeType string) ([]*compute.Compute, error) {
	return c.ListComputesWith(ctx, workspace, computeType, false)
}

// ListComputesWith is ListComputes that also lists the workspace's
// serverless pools when includeServerless (`--include-serverless`).
func (c *Client) ListComputesWith(ctx context.Context, workspace, computeType string, includeServerless bool) ([]*compute.Compute, error) {
	var out listBody[*compute.Compute]
	q := url.Values{}
	if computeType != "" {
		q.Set("type", computeType)
	}
	if includeServerless {
		q.Set("include_serverless", "true")
	}
	path := wsPath(workspace) + "/computes"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// DeleteCompute starts deleting a compute.
func (c *Client) DeleteCompute(ctx context.Context, workspace, name, ifMatch string) (*compute.Compute, error) {
	var out compute.Compute
	if _, err := c.do(ctx, http.MethodDelete, wsPath(workspace)+"/computes/"+url.PathEscape(name), nil, map[string]string{"If-Match": ifMatch}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListComputeEvents returns a compute's event log.
func (c *Client) ListComputeEvents(ctx context.Context, workspace, name string) ([]*core.Event, error) {
	var out listBody[*core.Event]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/computes/"+url.PathEscape(name)+"/events", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// ListLocations returns the server's locations with their quota use and
// hosts.
func (c *Client) ListLocations(ctx context.Context) ([]*catalog.LocationDetail, error) {
	var out listBody[*catalog.LocationDetail]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/locations", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetLocation returns one location (by name or alias) with its quota use
// and hosts.
func (c *Client) GetLocation(ctx context.Context, name string) (*catalog.LocationDetail, error) {
	var out catalog.LocationDetail
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/locations/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListSizes returns the sizes offered at a location, as generic JSON
// values in the server's key order.
func (c *Client) ListSizes(ctx context.Context, location string) (json.RawMessage, error) {
	return c.rawList(ctx, "/api/v1/locations/"+url.PathEscape(location)+"/sizes")
}

// ListUsages returns the quota usage lines of a location.
func (c *Client) ListUsages(ctx context.Context, location string) (json.RawMessage, error) {
	return c.rawList(ctx, "/api/v1/locations/"+url.PathEscape(location)+"/usages")
}

func (c *Client) rawList(ctx context.Context, path string) (json.RawMessage, error) {
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// ListWorkspaces returns all workspaces.
func (c *Client) ListWorkspaces(ctx context.Context) ([]*core.Workspace, error) {
	var out listBody[*core.Workspace]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/workspaces", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// CreateWorkspace creates a workspace.
func (c *Client) CreateWorkspace(ctx context.Context, ws *core.Workspace) (*core.Workspace, error) {
	var out core.Workspace
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/workspaces", ws, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteWorkspace deletes a workspace that has no computes and no
// unfinished jobs.
func (c *Client) DeleteWorkspace(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, wsPath(name), nil, nil, nil)
	return err
}

// GetWorkspace returns one workspace.
func (c *Client) GetWorkspace(ctx context.Context, name string) (*core.Workspace, error) {
	var out core.Workspace
	if _, err := c.do(ctx, http.MethodGet, wsPath(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// InstanceOperation starts an instance operation: "start", "stop",
// "restart", "enableSso" or "postponeShutdown" (query, e.g.
// "minutes=30", may be empty).
func (c *Client) InstanceOperation(ctx context.Context, workspace, name, op, query string) (*compute.Compute, error) {
	var out compute.Compute
	path := wsPath(workspace) + "/computes/" + url.PathEscape(name) + "/" + op
	if query != "" {
		path += "?" + query
	}
	if _, err := c.do(ctx, http.MethodPost, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateSchedules replaces an instance's schedules (needs only
// computes/updateSchedules/action).
func (c *Client) UpdateSchedules(ctx context.Context, workspace, name string, sc *compute.ComputeSchedules) (*compute.Compute, error) {
	var out compute.Compute
	body := map[string]any{"schedules": sc}
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/computes/"+url.PathEscape(name)+"/updateSchedules", body, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// InstanceLog returns an instance's setup log.
func (c *Client) InstanceLog(ctx context.Context, workspace, name string) ([]byte, error) {
	resp, err := c.raw(ctx, http.MethodGet, wsPath(workspace)+"/computes/"+url.PathEscape(name)+"/logs?kind=setup", nil, "", true)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// InstanceAppLog returns the log of an instance's custom application.
func (c *Client) InstanceAppLog(ctx context.Context, workspace, name, app string) ([]byte, error) {
	resp, err := c.raw(ctx, http.MethodGet, wsPath(workspace)+"/computes/"+url.PathEscape(name)+"/logs?kind=app&app="+url.QueryEscape(app), nil, "", true)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// AddNode adds a node to be joined by hand and returns its join command.
func (c *Client) AddNode(ctx context.Context, workspace, compute string) (*nodekind.JoinCommand, error) {
	var out nodekind.JoinCommand
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/computes/"+url.PathEscape(compute)+"/nodes", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveNode removes a node joined by hand.
func (c *Client) RemoveNode(ctx context.Context, workspace, compute, node string) (*nodekind.Node, error) {
	var out nodekind.Node
	if _, err := c.do(ctx, http.MethodDelete, wsPath(workspace)+"/computes/"+url.PathEscape(compute)+"/nodes/"+url.PathEscape(node), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
