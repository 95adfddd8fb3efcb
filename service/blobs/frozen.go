package blobs

import (
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// A registered version is read where it was uploaded: a code version's
// folder is packed for every job that names it, and a data asset or
// model registered at a place of workspaceblobstore is read from there.
// A version never changes, so what a version names is frozen: a write
// there (a blob put, a block list committed, its metadata changed) is
// refused, as Azure refuses writes under an immutability policy. Before
// this, any Contributor holding the workspace's SAS could replace the
// files of another user's code version, which azure-ai-ml reuses by
// its hash without uploading again: the victim's next job ran them.

// frozen refuses a write of name in workspace's container when a
// registered version (archived ones too) names it or a folder above it.
func frozen(tx store.Tx, workspace, container, name string) error {
	if !Writable(container) {
		return nil
	}
	for _, kind := range []asset.AssetKind{asset.AssetCode, asset.AssetData, asset.AssetModel} {
		list, err := tx.ListAssets(kind, asset.AssetFilter{Workspace: workspace, Archived: true})
		if err != nil {
			return err
		}
		for _, a := range list {
			place, ok := versionPlace(a)
			if !ok {
				continue
			}
			if name == place || strings.HasPrefix(name, strings.TrimSuffix(place, "/")+"/") {
				m := a.AssetMeta()
				return fail(http.StatusConflict, "BlobImmutableDueToPolicy",
					"%s is part of %s %s:%s, and a registered version never changes: upload to a new folder and register a new version", core.Short(name), kind, m.Name, m.Version)
			}
		}
	}
	return nil
}

// versionPlace is the place of workspaceblobstore a version names.
func versionPlace(a asset.Asset) (string, bool) {
	switch v := a.(type) {
	case *asset.Code:
		container, folder, err := asset.CodeFolder(v.Path)
		if err != nil || !Writable(container) {
			return "", false
		}
		return folder, true
	case *asset.Data:
		return datastorePlace(v.Path)
	case *asset.Model:
		return datastorePlace(v.Path)
	}
	return "", false
}

// datastorePlace is the path of workspaceblobstore a data URI names.
func datastorePlace(p string) (string, bool) {
	u, err := asset.ParseDataURI(p)
	if err != nil || u.Kind != asset.URIDatastore || !Writable(u.Datastore) || u.Path == "" {
		return "", false
	}
	return u.Path, true
}
