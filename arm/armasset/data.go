package armasset

import (
	"encoding/json"
	"strings"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Resource types of registered data assets, as Azure names them.
const (
	DataContainerType = "Microsoft.MachineLearningServices/workspaces/data"
	DataVersionType   = "Microsoft.MachineLearningServices/workspaces/data/versions"
)

// DataVersion is Azure's DataVersionBase resource: one version of a
// registered data asset (uri_file, uri_folder or mltable).
type DataVersion = AssetResource[DataVersionProperties]

// DataVersionProperties are a DataVersionBase's properties.
type DataVersionProperties struct {
	AssetBase
	// DataType is uri_file, uri_folder or mltable (Azure's dataType
	// discriminator, spelled as the YAML's type).
	DataType string `json:"dataType"`
	// DataURI is where the data lives (the YAML's path).
	DataURI string `json:"dataUri"`
	// ReferencedURIs are an MLTable's referenced paths, which the SDKs
	// send from the MLTable file; Shoal reads the MLTable file itself
	// when a job reads the data, so it keeps none.
	ReferencedURIs []string `json:"referencedUris,omitempty"`
	// IntellectualProperty is a registry's publishing setting, which
	// Shoal does not keep.
	IntellectualProperty json.RawMessage `json:"intellectualProperty,omitempty"`
}

// dataFields are the names Shoal's data rules give their fields and
// their names in a DataVersionBase.
var dataFields = map[string]string{"type": "properties.dataType", "path": "properties.dataUri", "description": "properties.description", "tags": "properties.tags"}

// fieldOf renames a refused field through fields (a tag keeps its key
// after the renamed prefix); "" when it has no ARM name.
func fieldOf(fields map[string]string, f string) string {
	head, rest, _ := strings.Cut(f, ".")
	to, ok := fields[head]
	if !ok {
		return ""
	}
	if rest != "" {
		return to + "." + rest
	}
	return to
}

// FromDataVersion reads a PUT body into the data asset version it
// registers (name and version from the path) and whether the body asks
// for it archived (nil: it does not say). What Shoal cannot keep is
// refused naming the field, never dropped.
func FromDataVersion(workspace, name, version string, body []byte) (*asset.Data, *bool, error) {
	var r DataVersion
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, core.FieldErrorf("body", "not a DataVersionBase: %v", err)
	}
	p := r.Properties
	if p == nil {
		return nil, nil, core.FieldErrorf("properties", "is required")
	}
	if err := p.check("a job's input given by its URI", ""); err != nil {
		return nil, nil, err
	}
	if ip := p.IntellectualProperty; len(ip) > 0 && string(ip) != "null" {
		return nil, nil, core.FieldErrorf("properties.intellectualProperty", "is a registry's publishing setting, which Shoal does not keep; leave it out")
	}
	if strings.TrimSpace(p.DataType) == "" {
		return nil, nil, core.FieldErrorf("properties.dataType", "is required: uri_file, uri_folder or mltable")
	}
	return &asset.Data{Workspace: workspace, Name: name, Version: version, Description: p.Description, Tags: p.Tags,
		Type: p.DataType, Path: p.DataURI}, p.IsArchived, nil
}

// ToDataVersion is a data asset version as Azure shows it.
func ToDataVersion(scope armcore.Scope, d *asset.Data) *DataVersion {
	return versionResource(scope, "data", DataVersionType, d.AssetMeta(),
		&DataVersionProperties{AssetBase: assetBase(d.AssetMeta(), d.Description, d.Tags), DataType: d.Type, DataURI: d.Path})
}

// DataVersionError is EnvironmentVersionError for data assets.
func DataVersionError(err error, name, version string) error {
	return versionError(err, "data", name, version, func(f string) string { return fieldOf(dataFields, f) })
}
