package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal"
)

// CreateEnvironment registers a version of e.Name (the next one when
// e.Version is empty); it reports whether the version was created (false:
// the same definition existed).
func (c *Client) CreateEnvironment(ctx context.Context, workspace string, e *shoal.Environment) (*shoal.Environment, bool, error) {
	var out shoal.Environment
	method, path := http.MethodPost, wsPath(workspace)+"/environments"
	if e.Version != "" {
		method, path = http.MethodPut, path+"/"+url.PathEscape(e.Name)+"/versions/"+url.PathEscape(e.Version)
	}
	status, err := c.do(ctx, method, path, e, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// ListEnvironments lists a workspace's environment versions (of one name
// when name is set), by name, newest first.
func (c *Client) ListEnvironments(ctx context.Context, workspace, name string, archived bool) ([]*shoal.Environment, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if archived {
		q.Set("archived", "true")
	}
	path := wsPath(workspace) + "/environments"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out listBody[*shoal.Environment]
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetEnvironment returns a version of an environment, or with label
// "latest" its newest version that is not archived.
func (c *Client) GetEnvironment(ctx context.Context, workspace, name, version, label string) (*shoal.Environment, error) {
	path := wsPath(workspace) + "/environments/" + url.PathEscape(name)
	if label != "" {
		path += "/labels/" + url.PathEscape(label)
	} else {
		path += "/versions/" + url.PathEscape(version)
	}
	var out shoal.Environment
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ArchiveEnvironment archives (archived true) or restores a version, or
// every version when version is "", and returns the versions as they are
// now.
func (c *Client) ArchiveEnvironment(ctx context.Context, workspace, name, version string, archived bool) ([]*shoal.Environment, error) {
	verb := "/restore"
	if archived {
		verb = "/archive"
	}
	path := wsPath(workspace) + "/environments/" + url.PathEscape(name) + verb
	if version != "" {
		path += "?version=" + url.QueryEscape(version)
	}
	var out listBody[*shoal.Environment]
	if _, err := c.do(ctx, http.MethodPost, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
