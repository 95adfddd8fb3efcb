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

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/job/paralleljob"
	"github.com/shoal-ml/shoal/service/environments"
	"github.com/shoal-ml/shoal/service/versioned"
)

// Config configures a Service: the store, and the file store holding the
// code and build contexts components name.
type Config = versioned.Stores

// Service registers command and parallel components in a workspace: the shared
// versioned service, over components.
type Service = versioned.Service[*job.Component]

// New returns a Service over cfg's store. What components add to the
// shared rules: their normalization (a registered component needs a
// name), the artifacts they name, and what makes two versions the same
// component.
func New(cfg Config) *Service {
	return versioned.New(versioned.Config[*job.Component]{Store: cfg.Store, Kind: versioned.Kind[*job.Component]{
		Normalize: func(c *job.Component) error { return paralleljob.NormalizeComponent(c, true) },
		Check:     func(c *job.Component) error { return checkArtifacts(cfg.Artifacts, c) },
		Same:      sameDefinition,
	}})
}

// checkArtifacts refuses code or a build context that was never uploaded
// to the workspace, so that a pipeline cannot fail later for a missing
// upload.
func checkArtifacts(files versioned.Artifacts, c *job.Component) error {
	env, _ := c.Environment.(map[string]any)
	build, _ := env["build"].(map[string]any)
	if c.Code == "" && build == nil {
		return nil
	}
	if files == nil {
		return core.Errorf(core.EINTERNAL, "this server has no file store")
	}
	if c.Code != "" {
		if !job.ValidateArtifactRef(c.Code) {
			return core.FieldErrorf("code", "must be an uploaded code folder (sha256:<hex>); `shoal component create -f` uploads the local folder for you")
		}
		if !files.HasArtifact(c.Workspace, c.Code) {
			return core.FieldErrorf("code", "artifact %s has not been uploaded to workspace %s", c.Code, c.Workspace)
		}
	}
	if build != nil {
		p, _ := build["path"].(string)
		if !job.ValidateArtifactRef(p) {
			return core.FieldErrorf("environment.build.path", "must be an uploaded build context (sha256:<hex>); `shoal component create -f` uploads the local folder for you")
		}
		df, _ := build["dockerfile_path"].(string)
		return environments.CheckBuildContext(files, c.Workspace, "environment.build.", &asset.EnvironmentBuild{Path: p, DockerfilePath: df})
	}
	return nil
}

// sameDefinition reports whether two versions define the same component
// (what a step runs), whoever created them when.
func sameDefinition(a, b *job.Component) bool {
	def := func(c *job.Component) string {
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
