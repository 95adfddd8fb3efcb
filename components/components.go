// Package components is the request service of registered command
// components (`shoal component create|list|show|archive|restore`,
// Azure's `az ml component`): versioned commands with typed inputs and
// outputs that pipeline steps name as azureml:<name>:<version> or
// azureml:<name>@latest. What a step's reference resolves to is decided at
// submit by shoal.ResolvePipelineComponents, over the same store.
package components

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/environments"
	"github.com/shoal-ml/shoal/versioned"
)

// Config configures a Service: the store, and the file store holding the
// code and build contexts components name.
type Config = versioned.Stores

// Service registers command components in a workspace: the shared
// versioned service, over components.
type Service = versioned.Service[*shoal.Component]

// New returns a Service over cfg's store. What components add to the
// shared rules: their normalization (a registered component needs a
// name), the artifacts they name, and what makes two versions the same
// component.
func New(cfg Config) *Service {
	return versioned.New(versioned.Config[*shoal.Component]{Store: cfg.Store, Kind: versioned.Kind[*shoal.Component]{
		Normalize: func(c *shoal.Component) error { return shoal.NormalizeComponent(c, true) },
		Check:     func(c *shoal.Component) error { return checkArtifacts(cfg.Artifacts, c) },
		Same:      sameDefinition,
	}})
}

// checkArtifacts refuses code or a build context that was never uploaded
// to the workspace, so that a pipeline cannot fail later for a missing
// upload.
func checkArtifacts(files versioned.Artifacts, c *shoal.Component) error {
	env, _ := c.Environment.(map[string]any)
	build, _ := env["build"].(map[string]any)
	if c.Code == "" && build == nil {
		return nil
	}
	if files == nil {
		return shoal.Errorf(shoal.EINTERNAL, "this server has no file store")
	}
	if c.Code != "" {
		if !shoal.ValidateArtifactRef(c.Code) {
			return shoal.FieldErrorf("code", "must be an uploaded code folder (sha256:<hex>); `shoal component create -f` uploads the local folder for you")
		}
		if !files.HasArtifact(c.Workspace, c.Code) {
			return shoal.FieldErrorf("code", "artifact %s has not been uploaded to workspace %s", c.Code, c.Workspace)
		}
	}
	if build != nil {
		p, _ := build["path"].(string)
		if !shoal.ValidateArtifactRef(p) {
			return shoal.FieldErrorf("environment.build.path", "must be an uploaded build context (sha256:<hex>); `shoal component create -f` uploads the local folder for you")
		}
		df, _ := build["dockerfile_path"].(string)
		return environments.CheckBuildContext(files, c.Workspace, "environment.build.", &shoal.EnvironmentBuild{Path: p, DockerfilePath: df})
	}
	return nil
}

// sameDefinition reports whether two versions define the same component
// (what a step runs), whoever created them when.
func sameDefinition(a, b *shoal.Component) bool {
	def := func(c *shoal.Component) string {
		d := *c
		d.Workspace, d.Version, d.Archived, d.CreatedOn, d.CreatedBy = "", "", false, time.Time{}, ""
		d.Name = strings.ToLower(d.Name)
		raw, err := json.Marshal(&d)
		if err != nil {
			return fmt.Sprintf("unencodable %p", c)
		}
		return string(raw)
	}
	return def(a) == def(b)
}
