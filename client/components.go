package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal"
)

// CreateComponent registers a version of a command component from its
// document (the YAML's keys as JSON, local code already uploaded): PUT to
// .../{name}/versions/{version} when both are given, else POST, the
// server giving the next version. It reports whether the version was
// created (false: the same definition existed).
func (c *Client) CreateComponent(ctx context.Context, workspace string, doc json.RawMessage, name, version string) (*shoal.Component, bool, error) {
	var out shoal.Component
	method, path := http.MethodPost, wsPath(workspace)+"/components"
	if name != "" && version != "" {
		method, path = http.MethodPut, path+"/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version)
	}
	status, err := c.do(ctx, method, path, doc, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// ListComponents lists a workspace's component versions (of one name
// when name is set), by name, newest first.
func (c *Client) ListComponents(ctx context.Context, workspace, name string, archived bool) ([]*shoal.Component, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if archived {
		q.Set("archived", "true")
	}
	path := wsPath(workspace) + "/components"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out listBody[*shoal.Component]
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetComponent returns a version of an component, or with label
// "latest" its newest version that is not archived.
func (c *Client) GetComponent(ctx context.Context, workspace, name, version, label string) (*shoal.Component, error) {
	path := wsPath(workspace) + "/components/" + url.PathEscape(name)
	if label != "" {
		path += "/labels/" + url.PathEscape(label)
	} else {
		path += "/versions/" + url.PathEscape(version)
	}
	var out shoal.Component
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ArchiveComponent archives (archived true) or restores a version, or
// every version when version is "", and returns the versions as they are
// now.
func (c *Client) ArchiveComponent(ctx context.Context, workspace, name, version string, archived bool) ([]*shoal.Component, error) {
	verb := "/restore"
	if archived {
		verb = "/archive"
	}
	path := wsPath(workspace) + "/components/" + url.PathEscape(name) + verb
	if version != "" {
		path += "?version=" + url.QueryEscape(version)
	}
	var out listBody[*shoal.Component]
	if _, err := c.do(ctx, http.MethodPost, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
