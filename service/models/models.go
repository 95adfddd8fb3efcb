// Package models is the request service of registered models (`shoal
// model create|list|show|archive|restore`, Azure's `az ml model`):
// versions of a custom, MLflow or Triton model's files, which jobs read
// as model inputs. It is the shared versioned service; what models add is
// their normalization, the upload their path may name, and what makes
// two versions the same model.
package models

import (
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/service/dataassets"
	"github.com/shoal-ml/shoal/service/versioned"
)

// Config configures a Service: the store, and the file store holding the
// uploads that versions name.
type Config = versioned.Stores

// Service registers models in a workspace.
type Service = versioned.Service[*asset.Model]

// New returns a Service over cfg's store.
func New(cfg Config) *Service {
	return versioned.New(versioned.Config[*asset.Model]{Store: cfg.Store, Kind: versioned.Kind[*asset.Model]{
		Normalize: dataassets.NormalizeWithJobPaths(cfg.Store, asset.NormalizeModel, func(a *asset.Model) *string { return &a.Path }),
		Check:     func(m *asset.Model) error { return dataassets.CheckUpload(cfg.Artifacts, m.Workspace, m.Path) },
		Same:      asset.SameModel,
	}})
}
