// Package dataassets is the request service of registered data assets
// (`shoal data create|list|show|archive|restore`, Azure's `az ml data`):
// versions of a file, a folder or an MLTable on a datastore or at a URL,
// which jobs name as azureml:<name>:<version> or azureml:<name>@latest.
// It is the shared versioned service; what data assets add is their
// normalization, the upload their path may name, and what makes two
// versions the same data.
package dataassets

import (
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/service/versioned"
)

// Config configures a Service: the store, and the file store holding the
// uploads that versions name.
type Config = versioned.Stores

// Service registers data assets in a workspace.
type Service = versioned.Service[*asset.Data]

// New returns a Service over cfg's store.
func New(cfg Config) *Service {
	return versioned.New(versioned.Config[*asset.Data]{Store: cfg.Store, Kind: versioned.Kind[*asset.Data]{
		Normalize: NormalizeWithJobPaths(cfg.Store, asset.NormalizeData, func(a *asset.Data) *string { return &a.Path }),
		Check:     func(d *asset.Data) error { return CheckUpload(cfg.Artifacts, d.Workspace, d.Path) },
		Same:      asset.SameData,
	}})
}

// CheckUpload refuses a path naming an upload (asset.ArtifactDataPath's
// LocalUpload URI) that the workspace does not hold: a version must not
// stand for files that were never uploaded, nor reach another
// workspace's upload by its digest. Any other path is for its reader to
// resolve. Models are checked alike.
func CheckUpload(files versioned.Artifacts, workspace, p string) error {
	id, _, ok := asset.DataPathArtifact(p)
	if !ok {
		return nil
	}
	if files == nil {
		return core.Errorf(core.EINTERNAL, "this server has no file store")
	}
	if !files.HasArtifact(workspace, id) {
		return core.FieldErrorf("path", "%s names upload %s, which workspace %s does not hold: register the local file or folder with `shoal data create -f` or `shoal model create -f`, which upload it first", core.Short(p), id, workspace)
	}
	return nil
}
