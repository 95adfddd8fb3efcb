package arm

import (
	"context"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/job"
)

// Components are the ARM routes of registered command components: the
// handlers of environments' (assetARM), over the components service.
func (h Handlers) Components() AssetRoutes {
	from := func(workspace, name, version string, body []byte) (*job.Component, *bool, error) {
		// A PUT carries no context this far; packing a code version is
		// bounded by the code's size limit.
		body, err := componentCode(context.Background(), h.Codes, workspace, body)
		if err != nil {
			return nil, nil, err
		}
		return armasset.FromComponentVersion(workspace, name, version, body)
	}
	return newAssetRoutes(h, h.Comps, "a", "component",
		func(scope Scope, c *job.Component) any { return armasset.ToComponentVersion(scope, c) }, from, armasset.ComponentVersionError)
}

// Data are the ARM routes of registered data assets (…/data, whose
// containers are DataContainers showing their type).
func (h Handlers) Data() AssetRoutes {
	a := newAssetARM(h, h.DataSvc, "a", "data", func(scope Scope, d *asset.Data) any { return armasset.ToDataVersion(scope, d) },
		armasset.FromDataVersion, armasset.DataVersionError)
	a.a, a.collection, a.containerType, a.containerResource = "a data asset", "data", armasset.DataContainerType, "a DataContainer"
	a.containerProps = func(newest *asset.Data, p *armasset.EnvironmentContainerProperties) { p.DataType = newest.Type }
	return a.routes()
}

// Models are the ARM routes of registered models.
func (h Handlers) Models() AssetRoutes {
	return newAssetRoutes(h, h.ModelSvc, "a", "model", func(scope Scope, m *asset.Model) any { return armasset.ToModelVersion(scope, m) },
		armasset.FromModelVersion, armasset.ModelVersionError)
}
