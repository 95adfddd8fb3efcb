package armasset

import (
	"encoding/json"
	"maps"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/arm/armjob"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/jobdecode"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
)

// Resource types of registered components, as Azure names them, and the
// schema a version's componentSpec declares.
const (
	ComponentContainerType = "Microsoft.MachineLearningServices/workspaces/components"
	ComponentVersionType   = "Microsoft.MachineLearningServices/workspaces/components/versions"
	ComponentSpecSchema    = "https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json"
)

// ComponentVersion is Azure's ComponentVersion resource: one version of a
// registered command component. Its container is Azure's
// ComponentContainer, of EnvironmentContainer's shape (Azure's containers
// share one).
type ComponentVersion = AssetResource[ComponentVersionProperties]

// ComponentVersionProperties are a ComponentVersion's properties.
// ComponentSpec is the component's document (the YAML's keys as JSON:
// $schema, name, version, type, inputs, outputs, command, code,
// environment, …), read as `shoal component create -f` and the native
// routes read it.
type ComponentVersionProperties struct {
	AssetBase
	ComponentSpec json.RawMessage `json:"componentSpec,omitempty"`
}

// ComponentSpecField is the prefix of a componentSpec key's name in a
// ComponentVersion.
const ComponentSpecField = "properties.componentSpec."

// armComponentField is the name in a ComponentVersion of a field Shoal's
// component rules name: a document key is under properties.componentSpec;
// description and tags are the version's own; name and version are the
// path's.
func armComponentField(f string) string {
	switch {
	case f == "name" || f == "version":
		return ""
	case f == "description" || f == "tags" || strings.HasPrefix(f, "tags."):
		return "properties." + f
	}
	return ComponentSpecField + f
}

// ComponentVersionError is EnvironmentVersionError for components.
func ComponentVersionError(err error, name, version string) error {
	return versionError(err, "component", name, version, armComponentField)
}

// FromComponentVersion reads a PUT body into the version it registers
// (name and version from the path; the componentSpec's, when given, must
// be the same) and whether the body asks for it archived (nil: it does
// not say). The description and tags are the version's properties or the
// componentSpec's (the same when both are given, as the SDKs send them).
// What Shoal cannot keep is refused naming the field, never dropped.
func FromComponentVersion(workspace, name, version string, body []byte) (*job.Component, *bool, error) {
	var r ComponentVersion
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, core.FieldErrorf("body", "not a ComponentVersion: %v", err)
	}
	p := r.Properties
	if p == nil {
		return nil, nil, core.FieldErrorf("properties", "is required")
	}
	if err := p.check("a pipeline step's inline component", name); err != nil {
		return nil, nil, err
	}
	switch spec := compute.NonNull(p.ComponentSpec); {
	case spec == nil:
		return nil, nil, core.FieldErrorf("properties.componentSpec", "is required: the command component's document (type, command, inputs, outputs, code, environment) as JSON")
	case jobdecode.JSONKind(spec) != '{':
		return nil, nil, core.FieldErrorf("properties.componentSpec", "must be a command component's document (a mapping of its keys), got %s", compute.ShortJSON(spec))
	}
	// A command or a parallel component (parallel_run_function's).
	c, err := paralleljob.DecodeComponent(withoutSDKSource(p.ComponentSpec), ComponentSpecField)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range []struct{ key, spec, path string }{{"name", c.Name, name}, {"version", c.Version, version}} {
		// An anonymous version is named by the path alone: azure-ai-ml
		// sends the component's own name and version ("1") in its spec
		// and its content hash as the URL's version, as Azure takes it.
		if f.spec != "" && f.spec != f.path && !IsAnonymousName(name) {
			return nil, nil, core.FieldErrorf(ComponentSpecField+f.key, "%q differs from the %s in the URL (%q)", armcore.Short(f.spec), f.key, armcore.Short(f.path))
		}
	}
	if c.Description != "" && p.Description != "" && c.Description != p.Description {
		return nil, nil, core.FieldErrorf(ComponentSpecField+"description", "differs from properties.description: give the version's description once (properties.description)")
	}
	if len(c.Tags) > 0 && len(p.Tags) > 0 && !maps.Equal(c.Tags, p.Tags) {
		return nil, nil, core.FieldErrorf(ComponentSpecField+"tags", "differ from properties.tags: give the version's tags once (properties.tags)")
	}
	c.Workspace, c.Name, c.Version = workspace, name, version
	if p.Description != "" {
		c.Description = p.Description
	}
	if len(p.Tags) > 0 {
		c.Tags = p.Tags
	}
	return c, p.IsArchived, nil
}

// ToComponentVersion is a version as Azure shows it: the component's
// document as componentSpec, as FromComponentVersion reads it back.
func ToComponentVersion(scope armcore.Scope, c *job.Component) *ComponentVersion {
	d := *c
	d.Archived, d.CreatedOn, d.CreatedBy = false, time.Time{}, ""
	// azure-ai-ml reads a component's code back as the code version it
	// sent (which it resolves), never Shoal's artifact ID.
	if d.CodeAsset != "" {
		d.Code, d.CodeAsset = "azureml:"+armjob.AssetID(scope.WorkspaceID(c.Workspace), "codes", "azureml:"+d.CodeAsset), ""
	}
	doc, err := json.Marshal(&d)
	if err != nil || len(doc) < 2 {
		doc = []byte("{}")
	}
	if d.Parallel != nil {
		doc = armjob.ParallelSpecShown(doc)
	}
	spec := []byte(`{"$schema":"` + ComponentSpecSchema + `"`)
	if len(doc) > 2 {
		spec = append(spec, ',')
	}
	spec = append(spec, doc[1:]...)
	return versionResource(scope, "components", ComponentVersionType, c.AssetMeta(),
		&ComponentVersionProperties{AssetBase: assetBase(c.AssetMeta(), c.Description, c.Tags), ComponentSpec: spec})
}

// withoutSDKSource drops _source from a componentSpec: azure-ai-ml writes
// where it built the component (BUILDER, YAML.COMPONENT, DSL) into every
// spec it sends, for its own bookkeeping; it says nothing about the
// component.
func withoutSDKSource(spec json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(spec, &m) != nil {
		return spec
	}
	if _, ok := m["_source"]; !ok {
		return spec
	}
	delete(m, "_source")
	b, err := json.Marshal(m)
	if err != nil {
		return spec
	}
	return b
}
