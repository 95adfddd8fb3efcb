package asset

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// Model is one version of a registered model (`az ml model create`): the
// files of a trained model, which jobs read as a custom_model,
// mlflow_model or triton_model input.
type Model struct {
	Workspace   string            `json:"-"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Type is custom_model (the default, as in Azure), mlflow_model or
	// triton_model.
	Type string `json:"type"`
	// Path is where the model's files live, as a Data's Path.
	Path string `json:"path"`
	// Properties are Azure's model properties: text kept with the
	// version, unlike tags never changed.
	Properties map[string]string `json:"properties,omitempty"`
	// Flavors are an MLflow model's flavors (python_function:
	// {loader_module: mlflow.sklearn}), each a map of text, as Azure keeps
	// them (its FlavorData).
	Flavors   map[string]map[string]string `json:"flavors,omitempty"`
	Archived  bool                         `json:"archived"`
	CreatedOn time.Time                    `json:"created_on"`
	CreatedBy string                       `json:"created_by,omitempty"`
}

// The types of models, Azure's.
const (
	ModelCustom = "custom_model"
	ModelMLflow = "mlflow_model"
	ModelTriton = "triton_model"
)

// ModelTypes are the types a model may have.
var ModelTypes = []string{ModelCustom, ModelMLflow, ModelTriton}

// Limits of a model's free-form fields: they are stored with each version
// and shown in every list.
const (
	MaxModelProperties   = 100
	MaxModelFlavorsBytes = 64 << 10
)

// DecodeModel reads a model's document (the YAML's keys as JSON), refusing
// an unknown key by name; Azure's $schema key is accepted and dropped.
func DecodeModel(raw []byte) (*Model, error) {
	var m Model
	if err := decodeDocument(raw, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// NormalizeModel checks a model version before it is created, trimming
// its text and setting its type's default. Version may be empty: the
// service then gives the next one.
func NormalizeModel(m *Model) error {
	m.Name, m.Version = strings.TrimSpace(m.Name), strings.TrimSpace(m.Version)
	if err := normalizeVersioned(m.Name, m.Version, m.Description, m.Tags); err != nil {
		return err
	}
	t, err := oneOf("type", m.Type, ModelCustom, ModelTypes)
	if err != nil {
		return err
	}
	m.Type = t
	m.Path = strings.TrimSpace(m.Path)
	if err := ValidateAssetPath("path", m.Path); err != nil {
		return err
	}
	if len(m.Properties) > MaxModelProperties {
		return core.FieldErrorf("properties", "at most %d properties are allowed, got %d", MaxModelProperties, len(m.Properties))
	}
	for _, k := range core.SortedKeys(m.Properties) {
		v := m.Properties[k]
		switch {
		case strings.TrimSpace(k) == "" || len(k) > 512:
			return core.FieldErrorf("properties", "a property name must be 1 to 512 characters long")
		case len(v) > 5000:
			return core.FieldErrorf("properties."+core.Short(k), "a property value is at most 5000 characters")
		}
		if err := core.NoControl("properties."+core.Short(k), k+v); err != nil {
			return err
		}
	}
	if len(m.Flavors) > 0 {
		raw, err := json.Marshal(m.Flavors)
		if err != nil {
			return core.FieldErrorf("flavors", "cannot be encoded: %v", err)
		}
		if len(raw) > MaxModelFlavorsBytes {
			return core.FieldErrorf("flavors", "is %d bytes as JSON, more than the %d a model's flavors may have", len(raw), MaxModelFlavorsBytes)
		}
	}
	return nil
}

// SameModel reports whether two versions define the same model, whoever
// created them when.
func SameModel(a, b *Model) bool { return sameDocument(a, b) }

// AssetKind is AssetModel.
func (*Model) AssetKind() AssetKind { return AssetModel }

// AssetMeta returns the model version's shared fields.
func (m *Model) AssetMeta() AssetMeta {
	return AssetMeta{m.Workspace, m.Name, m.Version, m.Archived, m.CreatedOn, m.CreatedBy}
}

// SetAssetMeta replaces the model version's shared fields.
func (m *Model) SetAssetMeta(a AssetMeta) {
	m.Workspace, m.Name, m.Version, m.Archived, m.CreatedOn, m.CreatedBy = a.Workspace, a.Name, a.Version, a.Archived, a.CreatedOn, a.CreatedBy
}
