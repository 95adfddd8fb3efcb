package armasset

import (
	"encoding/json"
	"maps"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Resource types of code assets, as Azure names them.
const (
	CodeContainerType = "Microsoft.MachineLearningServices/workspaces/codes"
	CodeVersionType   = "Microsoft.MachineLearningServices/workspaces/codes/versions"
)

// CodeVersion is Azure's CodeVersion resource.
type CodeVersion = AssetResource[CodeVersionProperties]

// CodeVersionProperties are a CodeVersion's properties: where the code
// lies (codeUri), with AssetBase's. properties holds the hash azure-ai-ml
// lists versions by (hash_sha256, hash_version); isAnonymous is what it
// sends for a job's local code.
type CodeVersionProperties struct {
	AssetBase
	CodeURI string `json:"codeUri"`
}

// codeFields map a Code's field names to a CodeVersion's.
var codeFields = map[string]string{"path": "properties.codeUri", "description": "properties.description",
	"tags": "properties.tags", "properties": "properties.properties"}

// FromCodeVersion reads a CodeVersion's PUT body (name and version from
// the path) and whether it asks the version archived.
func FromCodeVersion(workspace, name, version string, body []byte) (*asset.Code, *bool, error) {
	var r CodeVersion
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, core.FieldErrorf("body", "not a CodeVersion: %v", err)
	}
	p := r.Properties
	if p == nil {
		return nil, nil, core.FieldErrorf("properties", "is required")
	}
	if p.Stage != "" {
		return nil, nil, core.FieldErrorf("properties.stage", "Shoal keeps no stages; archive a version (properties.isArchived) to retire it")
	}
	c := &asset.Code{Workspace: workspace, Name: name, Version: version, Description: p.Description, Tags: p.Tags,
		Path: p.CodeURI, Properties: maps.Clone(p.Properties), Anonymous: p.IsAnonymous != nil && *p.IsAnonymous}
	if len(c.Properties) == 0 {
		c.Properties = nil
	}
	if len(c.Tags) == 0 {
		c.Tags = nil
	}
	return c, p.IsArchived, nil
}

// ToCodeVersion shows a code version as Azure's CodeVersion.
func ToCodeVersion(scope armcore.Scope, c *asset.Code) *CodeVersion {
	p := &CodeVersionProperties{AssetBase: assetBase(c.AssetMeta(), c.Description, c.Tags), CodeURI: c.Path}
	anonymous := c.Anonymous
	p.IsAnonymous = &anonymous
	if len(c.Properties) > 0 {
		p.Properties = maps.Clone(c.Properties)
	}
	return versionResource(scope, "codes", CodeVersionType, c.AssetMeta(), p)
}

// CodeVersionError is EnvironmentVersionError for code assets.
func CodeVersionError(err error, name, version string) error {
	return versionError(err, "code", name, version, func(f string) string { return fieldOf(codeFields, f) })
}
