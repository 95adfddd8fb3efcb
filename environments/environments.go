// Package environments is the request service of registered environments
// (`shoal environment create|list|show|archive|restore`, Azure's `az ml
// environment`): versions of an image, a Docker build context or a conda
// file on an image, which jobs name as azureml:<name>:<version> or
// azureml:<name>@latest. What a job's reference resolves to is decided at
// submit by shoal.ResolveJobEnvironment, over the same store.
package environments

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/archive"
)

// Artifacts is what the service reads of the file store: the uploaded
// build contexts.
type Artifacts interface {
	HasArtifact(workspace, id string) bool
	OpenArtifact(workspace, id string) (io.ReadCloser, error)
}

// Config configures a Service.
type Config struct {
	Store shoal.Store
	// Artifacts holds uploaded build contexts; nil refuses build
	// environments.
	Artifacts Artifacts
}

// Service registers environments in a workspace.
type Service struct {
	store shoal.Store
	files Artifacts
}

var _ shoal.EnvironmentService = (*Service)(nil)

// New returns a Service over cfg's store.
func New(cfg Config) *Service {
	return &Service{store: cfg.Store, files: cfg.Artifacts}
}

// CreateEnvironment creates a version of e.Name in e.Workspace: e.Version,
// or when empty the next integer version (1 for a new name), as Azure
// does. Creating a version that exists with the same definition returns
// it (created false); with another definition it is ECONFLICT, since a
// version never changes once jobs may run it.
func (s *Service) CreateEnvironment(ctx context.Context, e *shoal.Environment) (*shoal.Environment, bool, error) {
	if err := shoal.NormalizeEnvironment(e); err != nil {
		return nil, false, err
	}
	if e.Build != nil {
		if err := s.checkBuild(e.Workspace, e.Build); err != nil {
			return nil, false, err
		}
	}
	var out *shoal.Environment
	created := false
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		w, err := tx.GetWorkspace(e.Workspace)
		if shoal.ErrorCode(err) == shoal.ENOTFOUND {
			return shoal.Errorf(shoal.ENOTFOUND, "workspace %q not found", e.Workspace)
		} else if err != nil {
			return err
		}
		e.Workspace = w.Name
		if e.Version == "" {
			if e.Version, err = nextVersion(tx, e.Workspace, e.Name); err != nil {
				return err
			}
		} else if old, err := tx.GetEnvironment(e.Workspace, e.Name, e.Version); err == nil {
			if !sameDefinition(old, e) {
				return &shoal.Error{Code: shoal.ECONFLICT, Field: "version", Message: fmt.Sprintf(
					"version: environment %s already has version %s with another definition; a version never changes: create a new one (omit --version for the next)", old.Name, old.Version)}
			}
			out = old
			return nil
		} else if shoal.ErrorCode(err) != shoal.ENOTFOUND {
			return err
		}
		// Who and when are the server's to say, not the request's.
		e.CreatedBy, e.CreatedOn, e.Archived = shoal.ActorName(ctx), time.Time{}, false
		if err := tx.InsertEnvironment(e); err != nil {
			return err
		}
		out, created = e, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// checkBuild refuses a build context that was never uploaded to the
// workspace, is over the limit, or lacks its Dockerfile.
func (s *Service) checkBuild(workspace string, b *shoal.EnvironmentBuild) error {
	if s.files == nil {
		return shoal.Errorf(shoal.EINTERNAL, "this server has no file store")
	}
	if !shoal.ValidateArtifactRef(b.Path) {
		return shoal.FieldErrorf("build.path", "must be an uploaded build context (sha256:<hex>); `shoal environment create -f` uploads the local folder for you")
	}
	return CheckBuildContext(s.files, workspace, "build.", b)
}

// MaxBuildContextBytes bounds a build context's archive: a node
// downloads it before building, and a context that large has almost
// always swept in data or a virtual environment by mistake (list them in
// a .amlignore or .gitignore).
const MaxBuildContextBytes = 1 << 30

// maxBuildContextBytes is the limit in force: MaxBuildContextBytes, less
// in tests.
var maxBuildContextBytes int64 = MaxBuildContextBytes

// CheckBuildContext refuses a build context b (an artifact of the
// workspace) that was never uploaded, is over MaxBuildContextBytes or
// does not hold its Dockerfile; the error names prefix+"path" or
// prefix+"dockerfile_path". Registered environments and jobs' inline
// environments are checked alike.
func CheckBuildContext(files Artifacts, workspace, prefix string, b *shoal.EnvironmentBuild) error {
	if !files.HasArtifact(workspace, b.Path) {
		return shoal.FieldErrorf(prefix+"path", "artifact %s has not been uploaded to workspace %s", b.Path, workspace)
	}
	r, err := files.OpenArtifact(workspace, b.Path)
	if err != nil {
		return fmt.Errorf("open build context %s: %w", b.Path, err)
	}
	defer r.Close()
	counted := &countingReader{r: r}
	ok, err := archive.HasFile(counted, b.DockerfilePath)
	if err != nil {
		return shoal.FieldErrorf(prefix+"path", "artifact %s is not a build context (a tar.gz archive): %v", b.Path, err)
	}
	// The rest of the archive counts too.
	if _, err := io.Copy(io.Discard, io.LimitReader(counted, maxBuildContextBytes+1-counted.n)); err != nil {
		return fmt.Errorf("read build context %s: %w", b.Path, err)
	}
	if counted.n > maxBuildContextBytes {
		return shoal.FieldErrorf(prefix+"path", "the build context is over the limit of %s; leave data, outputs and virtual environments out of the folder (list them in .amlignore or .gitignore)", shoal.FormatBytes(maxBuildContextBytes))
	}
	if !ok {
		return shoal.FieldErrorf(prefix+"dockerfile_path", "%q is not a file in the build context", b.DockerfilePath)
	}
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// nextVersion is one more than the largest integer version of name,
// archived versions included (a version number is never reused); 1 for
// a new name.
func nextVersion(tx shoal.Tx, workspace, name string) (string, error) {
	list, err := tx.ListEnvironments(shoal.EnvironmentFilter{Workspace: workspace, Name: name, Archived: true})
	if err != nil {
		return "", err
	}
	return shoal.NextEnvironmentVersion(list), nil
}

// sameDefinition reports whether two versions define the same
// environment (what a job gets), whoever created them when.
func sameDefinition(a, b *shoal.Environment) bool {
	sameBuild := (a.Build == nil) == (b.Build == nil) && (a.Build == nil || *a.Build == *b.Build)
	return a.Image == b.Image && sameBuild && a.CondaFile == b.CondaFile && a.OSType == b.OSType &&
		a.Description == b.Description && maps.Equal(a.Tags, b.Tags)
}

// ListEnvironments returns a workspace's versions (of one name when
// f.Name is set), by name, newest first; archived ones only when asked.
func (s *Service) ListEnvironments(ctx context.Context, f shoal.EnvironmentFilter) (out []*shoal.Environment, err error) {
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		if err := workspaceExists(tx, f.Workspace); err != nil {
			return err
		}
		out, err = tx.ListEnvironments(f)
		return err
	})
	return out, err
}

// GetEnvironment returns one version, or with label latest the newest
// that is not archived.
func (s *Service) GetEnvironment(ctx context.Context, workspace, name, version, label string) (out *shoal.Environment, err error) {
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
			out, err = tx.LatestEnvironment(workspace, name)
		} else {
			out, err = tx.GetEnvironment(workspace, name, version)
		}
		return err
	})
	return out, err
}

// ArchiveEnvironment archives (archived true) or restores one version, or
// every version of name when version is "", and returns the versions as
// they are now. An archived version leaves lists and @latest; jobs that
// name it by its version still run it, as in Azure.
func (s *Service) ArchiveEnvironment(ctx context.Context, workspace, name, version string, archived bool) (out []*shoal.Environment, err error) {
	err = s.store.Update(ctx, func(tx shoal.Tx) error {
		if err := workspaceExists(tx, workspace); err != nil {
			return err
		}
		if err := tx.SetEnvironmentArchived(workspace, name, version, archived); err != nil {
			return err
		}
		if version != "" {
			e, err := tx.GetEnvironment(workspace, name, version)
			out = []*shoal.Environment{e}
			return err
		}
		out, err = tx.ListEnvironments(shoal.EnvironmentFilter{Workspace: workspace, Name: name, Archived: true})
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
