package asset

import (
	"encoding/json"
	"strings"
	"time"
)

// AssetData and AssetModel are the kinds of registered data assets and
// models (`shoal data create`, `shoal model create`).
const (
	AssetData  AssetKind = "data"
	AssetModel AssetKind = "model"
)

// Data is one version of a registered data asset (`az ml data create`):
// a file, a folder or an MLTable where the data lives, which jobs name as
// azureml:<name>:<version> or azureml:<name>@latest.
type Data struct {
	Workspace   string            `json:"-"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Type is uri_file, uri_folder (the default, as in Azure) or mltable.
	Type string `json:"type"`
	// Path is where the data lives: a datastore URI
	// (azureml://datastores/<ds>/paths/<p>), a storage or web URL. A local
	// path in the YAML is uploaded by the CLI first and becomes the
	// workspaceblobstore URI of its upload (ArtifactDataPath).
	Path      string    `json:"path"`
	Archived  bool      `json:"archived"`
	CreatedOn time.Time `json:"created_on"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// The types of data assets, Azure's.
const (
	DataURIFile   = "uri_file"
	DataURIFolder = "uri_folder"
	DataMLTable   = "mltable"
)

// DataTypes are the types a data asset may have.
var DataTypes = []string{DataURIFile, DataURIFolder, DataMLTable}

// DecodeData reads a data asset's document (the YAML's keys as JSON),
// refusing an unknown key by name; Azure's $schema key is accepted and
// dropped.
func DecodeData(raw []byte) (*Data, error) {
	var d Data
	if err := decodeDocument(raw, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// NormalizeData checks a data asset version before it is created,
// trimming its text and setting its type's default. Version may be empty:
// the service then gives the next one.
func NormalizeData(d *Data) error {
	d.Name, d.Version = strings.TrimSpace(d.Name), strings.TrimSpace(d.Version)
	if err := normalizeVersioned(d.Name, d.Version, d.Description, d.Tags); err != nil {
		return err
	}
	t, err := oneOf("type", d.Type, DataURIFolder, DataTypes)
	if err != nil {
		return err
	}
	d.Type = t
	d.Path = strings.TrimSpace(d.Path)
	return ValidateAssetPath("path", d.Path)
}

// SameData reports whether two versions define the same data (what a
// job reads), whoever created them when.
func SameData(a, b *Data) bool { return sameDocument(a, b) }

// AssetKind is AssetData.
func (*Data) AssetKind() AssetKind { return AssetData }

// AssetMeta returns the data asset version's shared fields.
func (d *Data) AssetMeta() AssetMeta {
	return AssetMeta{d.Workspace, d.Name, d.Version, d.Archived, d.CreatedOn, d.CreatedBy}
}

// SetAssetMeta replaces the data asset version's shared fields.
func (d *Data) SetAssetMeta(m AssetMeta) {
	d.Workspace, d.Name, d.Version, d.Archived, d.CreatedOn, d.CreatedBy = m.Workspace, m.Name, m.Version, m.Archived, m.CreatedOn, m.CreatedBy
}

// sameDocument compares two versions' definitions: their JSON without
// the shared fields that say who created them when, the name compared
// case-insensitively (names are).
func sameDocument[T Asset](a, b T) bool {
	def := func(x T) string {
		m := x.AssetMeta()
		defer x.SetAssetMeta(m)
		x.SetAssetMeta(AssetMeta{Name: strings.ToLower(m.Name)})
		raw, err := json.Marshal(x)
		if err != nil {
			return ""
		}
		return string(raw)
	}
	da, db := def(a), def(b)
	return da != "" && da == db
}
