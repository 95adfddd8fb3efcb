package client

import (
	"context"
	"net/http"
	"net/url"
)

// The routes of every kind of versioned asset (environments, components)
// are the same under the kind's collection, so the calls are written once
// here and each kind's methods name their collection and type.

// createAsset registers a version from body: PUT to
// .../{name}/versions/{version} when version is given, else POST to the
// collection, the server giving the next version. It reports whether the
// version was created (false: the same definition existed).
func createAsset[T any](ctx context.Context, c *Client, workspace, collection, name, version string, body any) (*T, bool, error) {
	var out T
	method, path := http.MethodPost, wsPath(workspace)+"/"+collection
	if version != "" {
		method, path = http.MethodPut, path+"/"+url.PathEscape(name)+"/versions/"+url.PathEscape(version)
	}
	status, err := c.do(ctx, method, path, body, nil, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// listAssets lists a workspace's versions of a collection (of one name
// when name is set), by name, newest first.
func listAssets[T any](ctx context.Context, c *Client, workspace, collection, name string, archived bool) ([]*T, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if archived {
		q.Set("archived", "true")
	}
	path := wsPath(workspace) + "/" + collection
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out listBody[*T]
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// getAsset returns a version, or with label "latest" the newest version
// that is not archived.
func getAsset[T any](ctx context.Context, c *Client, workspace, collection, name, version, label string) (*T, error) {
	path := wsPath(workspace) + "/" + collection + "/" + url.PathEscape(name)
	if label != "" {
		path += "/labels/" + url.PathEscape(label)
	} else {
		path += "/versions/" + url.PathEscape(version)
	}
	var out T
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// archiveAsset archives (archived true) or restores a version, or every
// version when version is "", and returns the versions as they are now.
func archiveAsset[T any](ctx context.Context, c *Client, workspace, collection, name, version string, archived bool) ([]*T, error) {
	verb := "/restore"
	if archived {
		verb = "/archive"
	}
	path := wsPath(workspace) + "/" + collection + "/" + url.PathEscape(name) + verb
	if version != "" {
		path += "?version=" + url.QueryEscape(version)
	}
	var out listBody[*T]
	if _, err := c.do(ctx, http.MethodPost, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}
