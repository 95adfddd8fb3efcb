package studio

import (
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service/dataassets"
	"github.com/shoal-ml/shoal/service/models"
)

// The pages of data assets and models: a list of versions and a
// version's page, read through the same versioned services as the API
// (which are stateless over the store), guarded by the same actions.

// assetRow is one version as the pages show it, whatever its kind.
type assetRow struct {
	Name, Version, Type, Path, Description, CreatedBy string
	Archived                                          bool
	CreatedOn                                         time.Time
	Tags, Properties                                  map[string]string
	Flavors                                           map[string]map[string]string
}

// assetKindPage is what the pages need of a kind: its section and
// title, its base path, the action that reads it, and its versions.
type assetKindPage struct {
	section, title, base, read string
	list                       func(q *req, name string, archived bool) ([]assetRow, error)
	get                        func(q *req, name, version string) (assetRow, error)
}

func dataRow(d *asset.Data) assetRow {
	return assetRow{Name: d.Name, Version: d.Version, Type: d.Type, Path: d.Path, Description: d.Description, CreatedBy: d.CreatedBy,
		Archived: d.Archived, CreatedOn: d.CreatedOn, Tags: d.Tags}
}

func modelRow(m *asset.Model) assetRow {
	return assetRow{Name: m.Name, Version: m.Version, Type: m.Type, Path: m.Path, Description: m.Description, CreatedBy: m.CreatedBy,
		Archived: m.Archived, CreatedOn: m.CreatedOn, Tags: m.Tags, Properties: m.Properties, Flavors: m.Flavors}
}

// rowsOf converts a kind's versions to rows.
func rowsOf[T any](list []T, row func(T) assetRow) []assetRow {
	out := make([]assetRow, len(list))
	for i, a := range list {
		out[i] = row(a)
	}
	return out
}

// assetPages returns the pages of data assets and models.
func (s *Studio) assetPages() (data, model assetKindPage) {
	stores := dataassets.Config{Store: s.cfg.Svc.Store(), Artifacts: s.cfg.Svc.Files()}
	dsvc, msvc := dataassets.New(stores), models.New(stores)
	data = assetKindPage{section: "data", title: "Data", base: "/data", read: identity.ActDataRead,
		list: func(q *req, name string, archived bool) ([]assetRow, error) {
			l, err := dsvc.List(q.ctx, asset.AssetFilter{Workspace: q.workspace, Name: name, Archived: archived})
			return rowsOf(l, dataRow), err
		},
		get: func(q *req, name, version string) (assetRow, error) {
			d, err := dsvc.Get(q.ctx, q.workspace, name, version, "")
			if err != nil {
				return assetRow{}, err
			}
			return dataRow(d), nil
		}}
	model = assetKindPage{section: "models", title: "Models", base: "/models", read: identity.ActModelsRead,
		list: func(q *req, name string, archived bool) ([]assetRow, error) {
			l, err := msvc.List(q.ctx, asset.AssetFilter{Workspace: q.workspace, Name: name, Archived: archived})
			return rowsOf(l, modelRow), err
		},
		get: func(q *req, name, version string) (assetRow, error) {
			m, err := msvc.Get(q.ctx, q.workspace, name, version, "")
			if err != nil {
				return assetRow{}, err
			}
			return modelRow(m), nil
		}}
	return data, model
}

// listPage is a kind's list: every version not archived, by name, newest
// first (?archived=true: archived ones too).
func (k assetKindPage) listPage(s *Studio) func(q *req) error {
	return func(q *req) error {
		if err := s.allow(q, k.read); err != nil {
			return err
		}
		archived := q.r.URL.Query().Get("archived") == "true"
		rows, err := k.list(q, "", archived)
		if err != nil {
			return err
		}
		return s.render(q, "assets", k.title, k.section, map[string]any{"Title": k.title, "Base": k.base, "Rows": rows, "Archived": archived})
	}
}

// versionPage is one version, with the name's other versions.
func (k assetKindPage) versionPage(s *Studio) func(q *req) error {
	return func(q *req) error {
		if err := s.allow(q, k.read); err != nil {
			return err
		}
		name, version := q.r.PathValue("name"), q.r.PathValue("version")
		if name == "" || version == "" {
			return core.Errorf(core.ENOTFOUND, "no such version")
		}
		row, err := k.get(q, name, version)
		if err != nil {
			return err
		}
		versions, err := k.list(q, row.Name, true)
		if err != nil {
			return err
		}
		return s.render(q, "asset", row.Name+":"+row.Version, k.section, map[string]any{"Title": k.title, "Base": k.base, "A": row, "Versions": versions})
	}
}
