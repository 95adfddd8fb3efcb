package api

import (
	"io"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/identity"
)

// dataAssetRoutes are the native routes of data assets
// (/api/v1/workspaces/{ws}/data) and models (…/models): the versioned
// asset routes, over their services, their documents decoded as the
// YAML's keys (Azure's $schema accepted, an unknown key refused by name).
func (s *Server) dataAssetRoutes() []Route {
	data := assetHandlers[*asset.Data]{s: s, svc: s.data, decode: func(body io.Reader) (*asset.Data, error) {
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		return asset.DecodeData(raw)
	}}
	models := assetHandlers[*asset.Model]{s: s, svc: s.models, decode: func(body io.Reader) (*asset.Model, error) {
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		return asset.DecodeModel(raw)
	}}
	return append(assetRoutes("data", identity.ActDataRead, identity.ActDataWrite, data),
		assetRoutes("models", identity.ActModelsRead, identity.ActModelsWrite, models)...)
}
