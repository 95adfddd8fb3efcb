package asset

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// AssetKind names a kind of versioned asset: registered environments and
// command components today, data assets and models next. Every kind is
// versioned alike (name, version, archived, @latest, the next integer
// version), so the store, the request service, the handlers and the CLI
// are written once over the kind; the kind's name is the noun of its
// messages ("environment %s has no version ...").
type AssetKind string

// The kinds of versioned assets.
const (
	AssetEnvironment AssetKind = "environment"
	AssetComponent   AssetKind = "component"
)

// AssetMeta is what every version of every kind has: who it belongs to,
// its name and version, whether it is archived, and who created it when.
// The store keys, orders and archives versions by it without knowing the
// kind's own fields.
type AssetMeta struct {
	Workspace string
	Name      string
	Version   string
	Archived  bool
	CreatedOn time.Time
	CreatedBy string
}

// Asset is one version of a versioned asset (*Environment, *Component).
// Its kind's fields stay its own, with their own JSON names, so that each
// kind's wire format is Azure's; the shared part is read and written
// through AssetMeta.
type Asset interface {
	// AssetKind returns the kind; it is called on nil pointers too, to
	// learn a type's kind.
	AssetKind() AssetKind
	// AssetMeta returns the shared fields.
	AssetMeta() AssetMeta
	// SetAssetMeta replaces the shared fields.
	SetAssetMeta(AssetMeta)
}

// KindOf returns the kind of the asset type T (a pointer type).
func KindOf[T Asset]() AssetKind {
	var zero T
	return zero.AssetKind()
}

// AssetFilter selects versions of one kind.
type AssetFilter struct {
	Workspace string
	// Name, when set, lists that name's versions; otherwise every name's.
	Name string
	// Archived includes archived versions.
	Archived bool
}

// NextAssetVersion is the version a new version of an asset gets when
// none is given, as Azure gives it: one more than the largest integer
// version among versions (archived ones included: a number is never
// reused), 1 for a new name. The request services create with it and the
// ARM facade shows it as a container's nextVersion.
func NextAssetVersion[T Asset](versions []T) string {
	next := int64(1)
	for _, a := range versions {
		if n, err := strconv.ParseInt(a.AssetMeta().Version, 10, 64); err == nil && n >= next {
			next = n + 1
		}
	}
	return strconv.FormatInt(next, 10)
}

// AssetReader reads versioned assets of any kind; the store's transaction
// is one. It is declared here so that the kinds need not import the Store
// interface, which names them all.
type AssetReader interface {
	GetAsset(kind AssetKind, workspace, name, version string) (Asset, error)
	LatestAsset(kind AssetKind, workspace, name string) (Asset, error)
	ListAssets(kind AssetKind, filter AssetFilter) ([]Asset, error)
}

// GetAssetVersion returns one version of a T, archived or not, through
// tx.GetAsset. Returns ENOTFOUND.
func GetAssetVersion[T Asset](tx AssetReader, workspace, name, version string) (T, error) {
	a, err := tx.GetAsset(KindOf[T](), workspace, name, version)
	return assetAs[T](a, err)
}

// LatestAssetVersion returns the version of a T created last that is not
// archived, through tx.LatestAsset. Returns ENOTFOUND.
func LatestAssetVersion[T Asset](tx AssetReader, workspace, name string) (T, error) {
	a, err := tx.LatestAsset(KindOf[T](), workspace, name)
	return assetAs[T](a, err)
}

// ListAssetVersions returns the versions of Ts filter selects, through
// tx.ListAssets, in its order.
func ListAssetVersions[T Asset](tx AssetReader, f AssetFilter) ([]T, error) {
	list, err := tx.ListAssets(KindOf[T](), f)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(list))
	for _, a := range list {
		t, err := assetAs[T](a, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// assetAs converts what the store read to T; a store that returned
// another kind is an internal error rather than a panic.
func assetAs[T Asset](a Asset, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	t, ok := a.(T)
	if !ok {
		return zero, fmt.Errorf("store: read a %T where a %T was asked for", a, zero)
	}
	return t, nil
}

// AssetService registers versions of one kind of asset. Methods return
// EINVALID, ENOTFOUND (workspace, name or version) and ECONFLICT (a
// version that exists with another definition).
type AssetService[T Asset] interface {
	// Create creates a version (the next one when its Version is empty)
	// and reports whether it was created; the same definition again
	// returns the existing version.
	Create(ctx context.Context, a T) (T, bool, error)
	// List returns versions, by name, newest version first.
	List(ctx context.Context, f AssetFilter) ([]T, error)
	// Get returns a version; label "latest" (with version "") returns the
	// newest version that is not archived.
	Get(ctx context.Context, workspace, name, version, label string) (T, error)
	// Archive archives (or restores, archived false) one version, or
	// every version when version is "".
	Archive(ctx context.Context, workspace, name, version string, archived bool) ([]T, error)
}
