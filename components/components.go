// Package components is the request service of registered command
// components (`shoal component create|list|show|archive|restore`,
// Azure's `az ml component`): versioned commands with typed inputs and
// outputs that pipeline steps name as azureml:<name>:<version> or
// azureml:<name>@latest. What a step's reference resolves to is decided at
// submit by shoal.ResolvePipelineComponents, over the same store.
package components

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/environments"
)

// Artifacts is what the service reads of the file store: the uploaded
// code folders and build contexts components name.
type Artifacts interface {
	HasArtifact(workspace, id string) bool
	OpenArtifact(workspace, id string) (io.ReadCloser, error)
}

// Config configures a Service.
type Config struct {
	Store shoal.Store
	// Artifacts holds uploaded code; nil refuses components with code or
	// an inline build environment.
	Artifacts Artifacts
}

// Service registers command components in a workspace.
type Service struct {
	store shoal.Store
	files Artifacts
}

var _ shoal.ComponentService = (*Service)(nil)

// New returns a Service over cfg's store.
func New(cfg Config) *Service {
	return &Service{store: cfg.Store, files: cfg.Artifacts}
}

// CreateComponent creates a version of c.Name in c.Workspace: c.Version,
// or when empty the next integer version (1 for a new name), as Azure
// does. The same definition again returns the existing version (created
// false); another definition under an existing version is ECONFLICT: a
// version never changes once pipelines may run it.
func (s *Service) CreateComponent(ctx context.Context, c *shoal.Component) (*shoal.Component, bool, error) {
	if err := shoal.NormalizeComponent(c, true); err != nil {
		return nil, false, err
	}
	if err := s.checkArtifacts(c); err != nil {
		return nil, false, err
	}
	var out *shoal.Component
	created := false
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		w, err := tx.GetWorkspace(c.Workspace)
		if shoal.ErrorCode(err) == shoal.ENOTFOUND {
			return shoal.Errorf(shoal.ENOTFOUND, "workspace %q not found", c.Workspace)
		} else if err != nil {
			return err
		}
		c.Workspace = w.Name
		if c.Version == "" {
			list, err := tx.ListComponents(shoal.ComponentFilter{Workspace: c.Workspace, Name: c.Name, Archived: true})
			if err != nil {
				return err
			}
			c.Version = shoal.NextComponentVersion(list)
		} else if old, err := tx.GetComponent(c.Workspace, c.Name, c.Version); err == nil {
			if !sameDefinition(old, c) {
				return &shoal.Error{Code: shoal.ECONFLICT, Field: "version", Message: fmt.Sprintf(
					"version: component %s already has version %s with another definition; a version never changes: create a new one (omit --version for the next)", old.Name, old.Version)}
			}
			out = old
			return nil
		} else if shoal.ErrorCode(err) != shoal.ENOTFOUND {
			return err
		}
		// Who and when are the server's to say, not the request's.
		c.CreatedBy, c.CreatedOn, c.Archived = shoal.ActorName(ctx), time.Time{}, false
		if err := tx.InsertComponent(c); err != nil {
			return err
		}
		out, created = c, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// checkArtifacts refuses code or a build context that was never uploaded
// to the workspace, so that a pipeline cannot fail later for a missing
// upload.
func (s *Service) checkArtifacts(c *shoal.Component) error {
	env, _ := c.Environment.(map[string]any)
	build, _ := env["build"].(map[string]any)
	if c.Code == "" && build == nil {
		return nil
	}
	if s.files == nil {
		return shoal.Errorf(shoal.EINTERNAL, "this server has no file store")
	}
	if c.Code != "" {
		if !shoal.ValidateArtifactRef(c.Code) {
			return shoal.FieldErrorf("code", "must be an uploaded code folder (sha256:<hex>); `shoal component create -f` uploads the local folder for you")
		}
		if !s.files.HasArtifact(c.Workspace, c.Code) {
			return shoal.FieldErrorf("code", "artifact %s has not been uploaded to workspace %s", c.Code, c.Workspace)
		}
	}
	if build != nil {
		p, _ := build["path"].(string)
		if !shoal.ValidateArtifactRef(p) {
			return shoal.FieldErrorf("environment.build.path", "must be an uploaded build context (sha256:<hex>); `shoal component create -f` uploads the local folder for you")
		}
		df, _ := build["dockerfile_path"].(string)
		return environments.CheckBuildContext(s.files, c.Workspace, "environment.build.", &shoal.EnvironmentBuild{Path: p, DockerfilePath: df})
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

// ListComponents returns a workspace's versions (of one name when f.Name
// is set), by name, newest first; archived ones only when asked.
func (s *Service) ListComponents(ctx context.Context, f shoal.ComponentFilter) (out []*shoal.Component, err error) {
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		if err := workspaceExists(tx, f.Workspace); err != nil {
			return err
		}
		out, err = tx.ListComponents(f)
		return err
	})
	return out, err
}

// GetComponent returns one version, or with label latest the newest that
// is not archived.
func (s *Service) GetComponent(ctx context.Context, workspace, name, version, label string) (out *shoal.Component, err error) {
	switch {
	case version != "" && label != "":
		return nil, shoal.FieldErrorf("label", "give a version or a label, not both")
	case version == "" && label == "":
		return nil, shoal.FieldErrorf("version", "is required: give a version (--version 3) or the label latest (--label latest)")
	case label != "" && !strings.EqualFold(label, shoal.LabelLatest):
		return nil, shoal.FieldErrorf("label", "%q is not a label: the only label is latest", label)
	}
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		if err := workspaceExists(tx, workspace); err != nil {
			return err
		}
		if label != "" {
			out, err = tx.LatestComponent(workspace, name)
		} else {
			out, err = tx.GetComponent(workspace, name, version)
		}
		return err
	})
	return out, err
}

// ArchiveComponent archives (archived true) or restores one version, or
// every version of name when version is "", and returns the versions as
// they are now. An archived version leaves lists and @latest; pipelines
// that name it by its version still run it, as in Azure.
func (s *Service) ArchiveComponent(ctx context.Context, workspace, name, version string, archived bool) (out []*shoal.Component, err error) {
	err = s.store.Update(ctx, func(tx shoal.Tx) error {
		if err := workspaceExists(tx, workspace); err != nil {
			return err
		}
		if err := tx.SetComponentArchived(workspace, name, version, archived); err != nil {
			return err
		}
		if version != "" {
			c, err := tx.GetComponent(workspace, name, version)
			out = []*shoal.Component{c}
			return err
		}
		out, err = tx.ListComponents(shoal.ComponentFilter{Workspace: workspace, Name: name, Archived: true})
		return err
	})
	return out, err
}

func workspaceExists(tx shoal.Tx, workspace string) error {
	if _, err := tx.GetWorkspace(workspace); shoal.ErrorCode(err) == shoal.ENOTFOUND {
		return shoal.Errorf(shoal.ENOTFOUND, "workspace %q not found", workspace)
	} else if err != nil {
		return err
	}
	return nil
}
