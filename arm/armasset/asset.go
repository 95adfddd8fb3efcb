// Package armasset translates Azure's versioned-asset resources
// (2022-10-01's EnvironmentVersion, ComponentVersion, DataVersionBase,
// ModelVersion, CodeVersion and their containers) to and from the assets
// packages domain/asset and domain/job define, so that a version an Azure
// SDK PUTs passes the same rules as one `shoal <noun> create -f` sends,
// and a refused field is named as the caller sent it. Package arm serves
// the routes (its generic asset handlers).
package armasset

import (
	"fmt"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// AssetResource is Azure's resource of a versioned asset's container or
// version (EnvironmentVersion, ComponentContainer, …): its id, name, type,
// creation and properties P.
type AssetResource[P any] struct {
	ID         string              `json:"id,omitempty"`
	Name       string              `json:"name,omitempty"`
	Type       string              `json:"type,omitempty"`
	SystemData *armcore.SystemData `json:"systemData,omitempty"`
	Properties *P                  `json:"properties"`
}

// versionResource is a version of a kind (its ARM collection and version
// resource type) as Azure shows it, with properties p.
func versionResource[P any](scope armcore.Scope, collection, typ string, m asset.AssetMeta, p *P) *AssetResource[P] {
	return &AssetResource[P]{
		ID:   scope.WorkspaceID(m.Workspace) + "/" + collection + "/" + m.Name + "/versions/" + m.Version,
		Name: m.Version, Type: typ, Properties: p,
		SystemData: &armcore.SystemData{CreatedAt: m.CreatedOn.UTC(), CreatedBy: m.CreatedBy},
	}
}

// AssetBase are the properties every kind's version has (Azure's
// AssetBase). Read-only ones (provisioningState) are accepted back as the
// SDKs send them when they PUT what they read (an archive).
type AssetBase struct {
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags"`
	// Properties is Azure's asset property dictionary; Shoal keeps none.
	Properties        map[string]string `json:"properties"`
	IsAnonymous       *bool             `json:"isAnonymous,omitempty"`
	IsArchived        *bool             `json:"isArchived,omitempty"`
	Stage             string            `json:"stage,omitempty"`
	ProvisioningState string            `json:"provisioningState,omitempty"`
}

// check refuses what Shoal does not keep of a version's AssetBase, naming
// the field; inline is what needs no registration instead of an
// anonymous version ("a job's inline environment"). An anonymous version
// is kept under the names azure-ai-ml gives them only (name, from the
// path: IsAnonymousName).
func (b *AssetBase) check(inline, name string) error {
	switch {
	case b.IsAnonymous != nil && *b.IsAnonymous && !IsAnonymousName(name):
		return core.FieldErrorf("properties.isAnonymous", "must be false: Shoal registers named versions only, and keeps anonymous ones under the names azure-ai-ml gives them (%s, %s) (%s needs no registration)", AnonymousEnvironmentName, AnonymousComponentName, inline)
	case len(b.Properties) > 0:
		return core.FieldErrorf("properties.properties", "Shoal keeps no asset properties; use properties.tags")
	case b.Stage != "":
		return core.FieldErrorf("properties.stage", "Shoal keeps no stages; archive a version (properties.isArchived) to retire it")
	}
	return nil
}

// assetBase is a registered version's AssetBase as Azure shows it.
func assetBase(m asset.AssetMeta, description string, tags map[string]string) AssetBase {
	archived, anonymous := m.Archived, IsAnonymousName(m.Name)
	if tags == nil {
		tags = map[string]string{}
	}
	return AssetBase{Description: description, Tags: tags, Properties: map[string]string{}, IsAnonymous: &anonymous, IsArchived: &archived, ProvisioningState: "Succeeded"}
}

// ToContainer is an asset as Azure shows its container, from all its
// versions (archived ones included, in the store's order: the newest
// first): archived when every version is, latestVersion the newest not
// archived (the newest when all are), and nextVersion the one a PUT
// without a version would get. kind is the kind with its article (for the
// error of no version), collection its ARM collection, containerType its
// container's resource type, and props, when set, adds what a kind's
// container shows of its newest version (a DataContainer's dataType).
func ToContainer[T asset.Asset](scope armcore.Scope, kind, collection, containerType string, versions []T, props func(newest T, p *EnvironmentContainerProperties)) (*EnvironmentContainer, error) {
	if len(versions) == 0 {
		return nil, fmt.Errorf("%s container needs a version", kind)
	}
	archived, latest, first := true, versions[0].AssetMeta(), versions[0].AssetMeta()
	for _, a := range versions {
		v := a.AssetMeta()
		if !v.Archived {
			if archived {
				latest = v
			}
			archived = false
		}
		if v.CreatedOn.Before(first.CreatedOn) {
			first = v
		}
	}
	m := versions[0].AssetMeta()
	p := &EnvironmentContainerProperties{
		Tags: map[string]string{}, Properties: map[string]string{}, IsArchived: &archived,
		LatestVersion: latest.Version, NextVersion: asset.NextAssetVersion(versions), ProvisioningState: "Succeeded",
	}
	if props != nil {
		props(versions[0], p)
	}
	return &EnvironmentContainer{
		ID: scope.WorkspaceID(m.Workspace) + "/" + collection + "/" + m.Name, Name: m.Name, Type: containerType,
		SystemData: &armcore.SystemData{CreatedAt: first.CreatedOn.UTC(), CreatedBy: first.CreatedBy},
		Properties: p,
	}, nil
}
