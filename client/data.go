package client

import (
	"context"
	"encoding/json"

	"github.com/shoal-ml/shoal/domain/asset"
)

// CreateData registers a version of a data asset from its document (the
// YAML's keys as JSON, a local path already uploaded): PUT to
// .../{name}/versions/{version} when both are given, else POST, the
// server giving the next version. It reports whether the version was
// created (false: the same definition existed).
func (c *Client) CreateData(ctx context.Context, workspace string, doc json.RawMessage, name, version string) (*asset.Data, bool, error) {
	if name == "" {
		version = "" // POST: the server names what is missing
	}
	return createAsset[asset.Data](ctx, c, workspace, "data", name, version, doc)
}

// ListData lists a workspace's data asset versions (of one name when
// name is set), by name, newest first.
func (c *Client) ListData(ctx context.Context, workspace, name string, archived bool) ([]*asset.Data, error) {
	return listAssets[asset.Data](ctx, c, workspace, "data", name, archived)
}

// GetData returns a version of a data asset, or with label "latest" its
// newest version that is not archived.
func (c *Client) GetData(ctx context.Context, workspace, name, version, label string) (*asset.Data, error) {
	return getAsset[asset.Data](ctx, c, workspace, "data", name, version, label)
}

// ArchiveData archives (archived true) or restores a version, or every
// version when version is "", and returns the versions as they are now.
func (c *Client) ArchiveData(ctx context.Context, workspace, name, version string, archived bool) ([]*asset.Data, error) {
	return archiveAsset[asset.Data](ctx, c, workspace, "data", name, version, archived)
}

// CreateModel registers a version of a model, as CreateData.
func (c *Client) CreateModel(ctx context.Context, workspace string, doc json.RawMessage, name, version string) (*asset.Model, bool, error) {
	if name == "" {
		version = ""
	}
	return createAsset[asset.Model](ctx, c, workspace, "models", name, version, doc)
}

// ListModels lists a workspace's model versions, as ListData.
func (c *Client) ListModels(ctx context.Context, workspace, name string, archived bool) ([]*asset.Model, error) {
	return listAssets[asset.Model](ctx, c, workspace, "models", name, archived)
}

// GetModel returns a version of a model, as GetData.
func (c *Client) GetModel(ctx context.Context, workspace, name, version, label string) (*asset.Model, error) {
	return getAsset[asset.Model](ctx, c, workspace, "models", name, version, label)
}

// ArchiveModel archives or restores model versions, as ArchiveData.
func (c *Client) ArchiveModel(ctx context.Context, workspace, name, version string, archived bool) ([]*asset.Model, error) {
	return archiveAsset[asset.Model](ctx, c, workspace, "models", name, version, archived)
}
