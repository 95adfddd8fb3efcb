package client

import (
	"context"
	"encoding/json"

	"github.com/shoal-ml/shoal/domain/job"
)

// CreateComponent registers a version of a command component from its
// document (the YAML's keys as JSON, local code already uploaded): PUT to
// .../{name}/versions/{version} when both are given, else POST, the
// server giving the next version. It reports whether the version was
// created (false: the same definition existed).
func (c *Client) CreateComponent(ctx context.Context, workspace string, doc json.RawMessage, name, version string) (*job.Component, bool, error) {
	if name == "" {
		// Without a name there is no version's URL: POST, and the server
		// names what is missing.
		version = ""
	}
	return createAsset[job.Component](ctx, c, workspace, "components", name, version, doc)
}

// ListComponents lists a workspace's component versions (of one name
// when name is set), by name, newest first.
func (c *Client) ListComponents(ctx context.Context, workspace, name string, archived bool) ([]*job.Component, error) {
	return listAssets[job.Component](ctx, c, workspace, "components", name, archived)
}

// GetComponent returns a version of a component, or with label "latest"
// its newest version that is not archived.
func (c *Client) GetComponent(ctx context.Context, workspace, name, version, label string) (*job.Component, error) {
	return getAsset[job.Component](ctx, c, workspace, "components", name, version, label)
}

// ArchiveComponent archives (archived true) or restores a version, or
// every version when version is "", and returns the versions as they are
// now.
func (c *Client) ArchiveComponent(ctx context.Context, workspace, name, version string, archived bool) ([]*job.Component, error) {
	return archiveAsset[job.Component](ctx, c, workspace, "components", name, version, archived)
}
