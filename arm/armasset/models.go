package armasset

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Resource types of registered models, as Azure names them.
const (
	ModelContainerType = "Microsoft.MachineLearningServices/workspaces/models"
	ModelVersionType   = "Microsoft.MachineLearningServices/workspaces/models/versions"
)

// ModelVersion is Azure's ModelVersion resource: one version of a
// registered model.
type ModelVersion = AssetResource[ModelVersionProperties]

// ModelVersionProperties are a ModelVersion's properties. Unlike other
// kinds, a model keeps Azure's asset properties (AssetBase.Properties).
type ModelVersionProperties struct {
	AssetBase
	// ModelType is custom_model, mlflow_model or triton_model, as the SDKs
	// send it (Azure's examples also spell it CustomModel, accepted).
	ModelType string `json:"modelType"`
	// ModelURI is where the model's files live (the YAML's path).
	ModelURI string `json:"modelUri"`
	// Flavors are the model's flavors, each a map of text (Azure's
	// FlavorData); shown as {} when it has none, since azure-ai-ml reads
	// every version's flavors as a map.
	Flavors map[string]FlavorData `json:"flavors"`
	// JobName is the job that produced the model; Shoal registers a job's
	// model outputs itself and keeps none given here.
	JobName              string          `json:"jobName,omitempty"`
	IntellectualProperty json.RawMessage `json:"intellectualProperty,omitempty"`
}

// FlavorData is one flavor of a model, Azure's.
type FlavorData struct {
	Data map[string]string `json:"data"`
}

// modelFields are the names Shoal's model rules give their fields and
// their names in a ModelVersion.
var modelFields = map[string]string{"type": "properties.modelType", "path": "properties.modelUri", "description": "properties.description",
	"tags": "properties.tags", "properties": "properties.properties", "flavors": "properties.flavors"}

// modelTypeNames reads Azure's spellings of a model's type.
var modelTypeNames = map[string]string{
	"custommodel": asset.ModelCustom, "custom_model": asset.ModelCustom,
	"mlflowmodel": asset.ModelMLflow, "mlflow_model": asset.ModelMLflow,
	"tritonmodel": asset.ModelTriton, "triton_model": asset.ModelTriton,
}

// FromModelVersion reads a PUT body into the model version it registers
// (name and version from the path) and whether the body asks for it
// archived (nil: it does not say). What Shoal cannot keep is refused
// naming the field, never dropped.
func FromModelVersion(workspace, name, version string, body []byte) (*asset.Model, *bool, error) {
	var r ModelVersion
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, core.FieldErrorf("body", "not a ModelVersion: %v", err)
	}
	p := r.Properties
	if p == nil {
		return nil, nil, core.FieldErrorf("properties", "is required")
	}
	props := p.Properties
	p.Properties = nil // a model's own, checked by its rules
	if err := p.check("a job's input given by its URI", ""); err != nil {
		return nil, nil, err
	}
	switch {
	case len(p.IntellectualProperty) > 0 && string(p.IntellectualProperty) != "null":
		return nil, nil, core.FieldErrorf("properties.intellectualProperty", "is a registry's publishing setting, which Shoal does not keep; leave it out")
	case p.JobName != "":
		return nil, nil, core.FieldErrorf("properties.jobName", "Shoal links a model to its job when the job registers it (an output with name and version); leave it out")
	}
	typ := p.ModelType
	if t, ok := modelTypeNames[strings.ToLower(strings.TrimSpace(typ))]; ok {
		typ = t
	}
	m := &asset.Model{Workspace: workspace, Name: name, Version: version, Description: p.Description, Tags: p.Tags,
		Type: typ, Path: p.ModelURI, Properties: props}
	if len(p.Flavors) > 0 {
		m.Flavors = make(map[string]map[string]string, len(p.Flavors))
		for k, f := range p.Flavors {
			m.Flavors[k] = maps.Clone(f.Data)
		}
	}
	return m, p.IsArchived, nil
}

// ToModelVersion is a model version as Azure shows it.
func ToModelVersion(scope armcore.Scope, m *asset.Model) *ModelVersion {
	p := &ModelVersionProperties{AssetBase: assetBase(m.AssetMeta(), m.Description, m.Tags), ModelType: m.Type, ModelURI: m.Path}
	if len(m.Properties) > 0 {
		p.Properties = maps.Clone(m.Properties)
	}
	p.Flavors = make(map[string]FlavorData, len(m.Flavors))
	if len(m.Flavors) > 0 {
		for k, f := range m.Flavors {
			p.Flavors[k] = FlavorData{Data: maps.Clone(f)}
		}
	}
	return versionResource(scope, "models", ModelVersionType, m.AssetMeta(), p)
}

// ModelVersionError is EnvironmentVersionError for models.
func ModelVersionError(err error, name, version string) error {
	return versionError(err, "model", name, version, func(f string) string { return fieldOf(modelFields, f) })
}
