package client

import (
	"context"

	"github.com/shoal-ml/shoal/domain/asset"
)

// CreateEnvironment registers a version of e.Name (the next one when
// e.Version is empty); it reports whether the version was created (false:
// the same definition existed).
func (c *Client) CreateEnvironment(ctx context.Context, workspace string, e *asset.Environment) (*asset.Environment, bool, error) {
	return createAsset[asset.Environment](ctx, c, workspace, "environments", e.Name, e.Version, e)
}

// ListEnvironments lists a workspace's environment versions (of one name
// when name is set), by name, newest first.
func (c *Client) ListEnvironments(ctx context.Context, workspace, name string, archived bool) ([]*asset.Environment, error) {
	return listAssets[asset.Environment](ctx, c, workspace, "environments", name, archived)
}

// GetEnvironment returns a version of an environment, or with label
// "latest" its newest version that is not archived.
func (c *Client) GetEnvironment(ctx context.Context, workspace, name, version, label string) (*asset.Environment, error) {
	return getAsset[asset.Environment](ctx, c, workspace, "environments", name, version, label)
}

// ArchiveEnvironment archives (archived true) or restores a version, or
// every version when version is "", and returns the versions as they are
// now.
func (c *Client) ArchiveEnvironment(ctx context.Context, workspace, name, version string, archived bool) ([]*asset.Environment, error) {
	return archiveAsset[asset.Environment](ctx, c, workspace, "environments", name, version, archived)
}
