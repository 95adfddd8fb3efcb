package store

import (
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// NewAsset returns an empty version of kind, for the store to decode a
// stored version into. A kind it does not know is an internal error: the
// kinds are Shoal's, never a request's.
func NewAsset(kind asset.AssetKind) (asset.Asset, error) {
	switch kind {
	case asset.AssetEnvironment:
		return &asset.Environment{}, nil
	case asset.AssetComponent:
		return &job.Component{}, nil
	case asset.AssetData:
		return &asset.Data{}, nil
	case asset.AssetModel:
		return &asset.Model{}, nil
	case asset.AssetCode:
		return &asset.Code{}, nil
	}
	return nil, core.Errorf(core.EINTERNAL, "unknown kind of asset %q", kind)
}
