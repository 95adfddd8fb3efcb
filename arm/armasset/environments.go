package armasset

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
)

// Resource types of registered environments, as Azure names them.
const (
	EnvironmentContainerType = "Microsoft.MachineLearningServices/workspaces/environments"
	EnvironmentVersionType   = "Microsoft.MachineLearningServices/workspaces/environments/versions"
)

// EnvironmentVersion is Azure's EnvironmentVersion resource: one version
// of a registered environment.
type EnvironmentVersion = AssetResource[EnvironmentVersionProperties]

// EnvironmentVersionProperties are an EnvironmentVersion's properties.
// Read-only ones (environmentType, provisioningState) are accepted back
// as the SDKs send them when they PUT what they read (an archive).
type EnvironmentVersionProperties struct {
	AssetBase
	Image     string        `json:"image,omitempty"`
	CondaFile string        `json:"condaFile,omitempty"`
	Build     *BuildContext `json:"build,omitempty"`
	OSType    string        `json:"osType,omitempty"`
	// EnvironmentType is UserCreated for every registered version
	// (Curated ones are Azure's, mapped by the server config).
	EnvironmentType string `json:"environmentType,omitempty"`
	// AutoRebuild is Disabled: Shoal does not rebuild a version when its
	// base image changes (a version never changes).
	AutoRebuild string `json:"autoRebuild,omitempty"`
	// InferenceConfig is for online deployments, which Shoal does not
	// run; it is refused when given.
	InferenceConfig json.RawMessage `json:"inferenceConfig,omitempty"`
}

// BuildContext is a version's Docker build context. Shoal's ContextURI
// is an artifact uploaded to the workspace (sha256:<hex>), not a storage
// URL.
type BuildContext struct {
	ContextURI     string `json:"contextUri"`
	DockerfilePath string `json:"dockerfilePath,omitempty"`
}

// EnvironmentContainer is Azure's EnvironmentContainer resource: a
// registered environment's name and what its versions add up to. Azure's
// containers of other versioned assets (ComponentContainer,
// DataContainer) have the same shape, so ToContainer shows every kind's container with it.
type EnvironmentContainer = AssetResource[EnvironmentContainerProperties]

// EnvironmentContainerProperties are a container's properties. Shoal
// keeps descriptions and tags on versions only.
type EnvironmentContainerProperties struct {
	Description       string            `json:"description,omitempty"`
	Tags              map[string]string `json:"tags"`
	Properties        map[string]string `json:"properties"`
	IsArchived        *bool             `json:"isArchived,omitempty"`
	LatestVersion     string            `json:"latestVersion,omitempty"`
	NextVersion       string            `json:"nextVersion,omitempty"`
	ProvisioningState string            `json:"provisioningState,omitempty"`
	// DataType is a DataContainer's: its versions' type (uri_file,
	// uri_folder, mltable), the newest version's.
	DataType string `json:"dataType,omitempty"`
}

// environmentFields are the names Shoal's environment rules give their
// fields and the names the same fields have in an EnvironmentVersion, so
// that an error names what the caller sent.
var environmentFields = []struct{ shoal, arm string }{
	{"build.path", "properties.build.contextUri"},
	{"build.dockerfile_path", "properties.build.dockerfilePath"},
	{"build", "properties.build"},
	{"image", "properties.image"},
	{"conda_file", "properties.condaFile"},
	{"os_type", "properties.osType"},
	{"description", "properties.description"},
	{"tags", "properties.tags"},
}

// EnvironmentVersionError renames the field of an EINVALID error from
// the environments service to its name in an EnvironmentVersion, and says
// a version's conflict without the CLI's flags.
func EnvironmentVersionError(err error, name, version string) error {
	return versionError(err, "environment", name, version, func(f string) string {
		for _, m := range environmentFields {
			if f == m.shoal || strings.HasPrefix(f, m.shoal+".") {
				return m.arm + strings.TrimPrefix(f, m.shoal)
			}
		}
		return ""
	})
}

// versionError is what a kind's service refused of a version's PUT
// (name and version from the path), as an ARM caller reads it: a
// version's conflict said without the CLI's flags, and an EINVALID
// field renamed by armField to its name in the kind's version resource
// ("" leaves it as it is).
func versionError(err error, noun, name, version string, armField func(field string) string) error {
	f := core.ErrorField(err)
	if core.ErrorCode(err) == core.ECONFLICT && f == "version" {
		return &core.Error{Code: core.ECONFLICT, Field: f, Message: fmt.Sprintf(
			"version: %s %s already has version %s with another definition; a version never changes: PUT a new version (the container's nextVersion is free)", noun, name, version)}
	}
	if f == "" || core.ErrorCode(err) != core.EINVALID {
		return err
	}
	to := armField(f)
	if to == "" {
		return err
	}
	return &core.Error{Code: core.EINVALID, Field: to, Message: to + strings.TrimPrefix(core.ErrorMessage(err), f)}
}

// FromEnvironmentVersion reads a PUT body into the version it registers
// (name and version from the path) and whether the body asks for it
// archived (nil: it does not say). What Shoal cannot keep is refused
// naming the field, never dropped.
func FromEnvironmentVersion(workspace, name, version string, body []byte) (*asset.Environment, *bool, error) {
	var r EnvironmentVersion
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, core.FieldErrorf("body", "not an EnvironmentVersion: %v", err)
	}
	p := r.Properties
	if p == nil {
		return nil, nil, core.FieldErrorf("properties", "is required")
	}
	if err := p.check("a job's inline environment", name); err != nil {
		return nil, nil, err
	}
	switch {
	case len(p.InferenceConfig) > 0 && string(p.InferenceConfig) != "null":
		return nil, nil, core.FieldErrorf("properties.inferenceConfig", "is for online deployments, which Shoal does not run; leave it out")
	case p.EnvironmentType != "" && !strings.EqualFold(p.EnvironmentType, "UserCreated"):
		return nil, nil, core.FieldErrorf("properties.environmentType", "%q: a registered environment is UserCreated; curated ones are mapped to images in the server config", p.EnvironmentType)
	case p.AutoRebuild != "" && !strings.EqualFold(p.AutoRebuild, "Disabled"):
		return nil, nil, core.FieldErrorf("properties.autoRebuild", "%q: Shoal never rebuilds a version (a version never changes); give Disabled or leave it out", p.AutoRebuild)
	}
	e := &asset.Environment{
		Workspace: workspace, Name: name, Version: version, Description: p.Description, Tags: p.Tags,
		Image: p.Image, CondaFile: p.CondaFile, OSType: p.OSType,
	}
	if b := p.Build; b != nil {
		uri := strings.TrimSpace(b.ContextURI)
		if !job.ValidateArtifactRef(uri) {
			return nil, nil, core.FieldErrorf("properties.build.contextUri",
				"%q is not an uploaded build context: Shoal takes a context uploaded to the workspace (sha256:<hex>, as POST /api/v1/workspaces/%s/artifacts or `shoal environment create -f` give), not a storage or Git URL", armcore.Short(uri), workspace)
		}
		e.Build = &asset.EnvironmentBuild{Path: uri, DockerfilePath: b.DockerfilePath}
	}
	return e, p.IsArchived, nil
}

// ToEnvironmentVersion is a version as Azure shows it.
func ToEnvironmentVersion(scope armcore.Scope, e *asset.Environment) *EnvironmentVersion {
	p := &EnvironmentVersionProperties{
		AssetBase: assetBase(e.AssetMeta(), e.Description, e.Tags),
		Image:     e.Image, CondaFile: e.CondaFile, OSType: osTypeName(e.OSType),
		EnvironmentType: "UserCreated", AutoRebuild: "Disabled",
	}
	if e.Build != nil {
		p.Build = &BuildContext{ContextURI: e.Build.Path, DockerfilePath: e.Build.DockerfilePath}
	}
	return versionResource(scope, "environments", EnvironmentVersionType, e.AssetMeta(), p)
}

// osTypeName is Azure's spelling of an operating system.
func osTypeName(os string) string {
	switch os {
	case asset.OSTypeLinux, "":
		return "Linux"
	case asset.OSTypeWindows:
		return "Windows"
	}
	return os
}

// ToEnvironmentContainer is a registered environment as Azure shows its
// container, from all its versions (archived ones included, in the
// store's order: the newest first); see ToContainer.
func ToEnvironmentContainer(scope armcore.Scope, versions []*asset.Environment) (*EnvironmentContainer, error) {
	return ToContainer(scope, "an environment", "environments", EnvironmentContainerType, versions, nil)
}

// FromEnvironmentContainer reads a container's PUT body: whether it asks
// the environment archived (nil: it does not say). A description, tags
// or asset properties are refused: Shoal keeps them on versions.
func FromEnvironmentContainer(body []byte) (*bool, error) {
	return FromContainer("environment", "an EnvironmentContainer", body)
}

// FromContainer reads the PUT body of a container of noun's kind
// (resource is the container's resource with its article, for errors).
func FromContainer(noun, resource string, body []byte) (*bool, error) {
	var r EnvironmentContainer
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, core.FieldErrorf("body", "not %s: %v", resource, err)
	}
	p := r.Properties
	if p == nil {
		return nil, core.FieldErrorf("properties", "is required")
	}
	switch {
	case p.Description != "":
		return nil, core.FieldErrorf("properties.description", "Shoal keeps descriptions on versions, not on the %s; set it on a version", noun)
	case len(p.Tags) > 0:
		return nil, core.FieldErrorf("properties.tags", "Shoal keeps tags on versions, not on the %s; set them on a version", noun)
	case len(p.Properties) > 0:
		return nil, core.FieldErrorf("properties.properties", "Shoal keeps no asset properties")
	}
	return p.IsArchived, nil
}
