package joboutputs

import (
	"slices"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// registerDryRun is a transaction whose versioned-asset inserts stay in
// memory: reads of assets see them on top of what the store holds, so a
// run of registrations over it meets the same conflicts (a version taken
// with another definition, two outputs registering one version) as the
// real run, and stores nothing. Everything else goes to the wrapped
// transaction.
type registerDryRun struct {
	store.Tx
	added []asset.Asset
}

// same says whether a is the version (kind, workspace, name, version),
// compared as the store compares them (case-insensitively).
func same(a asset.Asset, kind asset.AssetKind, workspace, name, version string) bool {
	m := a.AssetMeta()
	return a.AssetKind() == kind && strings.EqualFold(m.Workspace, workspace) && (name == "" || strings.EqualFold(m.Name, name)) &&
		(version == "" || strings.EqualFold(m.Version, version))
}

// InsertAsset keeps a in memory, refusing a version that exists as the
// store refuses it.
func (d *registerDryRun) InsertAsset(a asset.Asset) error {
	m := a.AssetMeta()
	if _, err := d.GetAsset(a.AssetKind(), m.Workspace, m.Name, m.Version); err == nil {
		return core.Errorf(core.ECONFLICT, "%s %s version %s exists", a.AssetKind(), m.Name, m.Version)
	} else if core.ErrorCode(err) != core.ENOTFOUND {
		return err
	}
	d.added = append(d.added, a)
	return nil
}

// GetAsset is a version kept in memory or the store's.
func (d *registerDryRun) GetAsset(kind asset.AssetKind, workspace, name, version string) (asset.Asset, error) {
	for _, a := range d.added {
		if same(a, kind, workspace, name, version) {
			return a, nil
		}
	}
	return d.Tx.GetAsset(kind, workspace, name, version)
}

// LatestAsset is the last version kept in memory, or the store's.
func (d *registerDryRun) LatestAsset(kind asset.AssetKind, workspace, name string) (asset.Asset, error) {
	for i := len(d.added) - 1; i >= 0; i-- {
		if same(d.added[i], kind, workspace, name, "") {
			return d.added[i], nil
		}
	}
	return d.Tx.LatestAsset(kind, workspace, name)
}

// ListAssets is the store's list with the versions kept in memory that
// the filter selects, newest first within a name.
func (d *registerDryRun) ListAssets(kind asset.AssetKind, f asset.AssetFilter) ([]asset.Asset, error) {
	list, err := d.Tx.ListAssets(kind, f)
	if err != nil {
		return nil, err
	}
	var mine []asset.Asset
	for i := len(d.added) - 1; i >= 0; i-- {
		if same(d.added[i], kind, f.Workspace, f.Name, "") {
			mine = append(mine, d.added[i])
		}
	}
	out := append(mine, list...)
	slices.SortStableFunc(out, func(a, b asset.Asset) int {
		return strings.Compare(strings.ToLower(a.AssetMeta().Name), strings.ToLower(b.AssetMeta().Name))
	})
	return out, nil
}
