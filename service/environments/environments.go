// Package environments is the request service of registered environments
// (`shoal environment create|list|show|archive|restore`, Azure's `az ml
// environment`): versions of an image, a Docker build context or a conda
// file on an image, which jobs name as azureml:<name>:<version> or
// azureml:<name>@latest. What a job's reference resolves to is decided at
// submit by shoal.ResolveJobEnvironment, over the same store.
package environments

import (
	"fmt"
	"io"
	"maps"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/service/versioned"
)

// Artifacts is what the service reads of the file store: the uploaded
// build contexts.
type Artifacts = versioned.Artifacts

// Config configures a Service: the store, and the file store holding the
// build contexts.
type Config = versioned.Stores

// Service registers environments in a workspace: the shared versioned
// service, over environments.
type Service = versioned.Service[*asset.Environment]

// New returns a Service over cfg's store. What environments add to the
// shared rules: their normalization, a build context's checks, and what
// makes two versions the same environment.
func New(cfg Config) *Service {
	check := func(e *asset.Environment) error {
		if e.Build == nil {
			return nil
		}
		return checkBuild(cfg.Artifacts, e.Workspace, e.Build)
	}
	return versioned.New(versioned.Config[*asset.Environment]{Store: cfg.Store, Kind: versioned.Kind[*asset.Environment]{
		Normalize: asset.NormalizeEnvironment, Check: check, Same: sameDefinition}})
}

// checkBuild refuses a build context that was never uploaded to the
// workspace, is over the limit, or lacks its Dockerfile.
func checkBuild(files Artifacts, workspace string, b *asset.EnvironmentBuild) error {
	if files == nil {
		return core.Errorf(core.EINTERNAL, "this server has no file store")
	}
	if !job.ValidateArtifactRef(b.Path) {
		return core.FieldErrorf("build.path", "must be an uploaded build context (sha256:<hex>); `shoal environment create -f` uploads the local folder for you")
	}
	return CheckBuildContext(files, workspace, "build.", b)
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
func CheckBuildContext(files Artifacts, workspace, prefix string, b *asset.EnvironmentBuild) error {
	if !files.HasArtifact(workspace, b.Path) {
		return core.FieldErrorf(prefix+"path", "artifact %s has not been uploaded to workspace %s", b.Path, workspace)
	}
	r, err := files.OpenArtifact(workspace, b.Path)
	if err != nil {
		return fmt.Errorf("open build context %s: %w", b.Path, err)
	}
	defer r.Close()
	counted := &countingReader{r: r}
	ok, err := archive.HasFile(counted, b.DockerfilePath)
	if err != nil {
		return core.FieldErrorf(prefix+"path", "artifact %s is not a build context (a tar.gz archive): %v", b.Path, err)
	}
	// The rest of the archive counts too.
	if _, err := io.Copy(io.Discard, io.LimitReader(counted, maxBuildContextBytes+1-counted.n)); err != nil {
		return fmt.Errorf("read build context %s: %w", b.Path, err)
	}
	if counted.n > maxBuildContextBytes {
		return core.FieldErrorf(prefix+"path", "the build context is over the limit of %s; leave data, outputs and virtual environments out of the folder (list them in .amlignore or .gitignore)", money.FormatBytes(maxBuildContextBytes))
	}
	if !ok {
		return core.FieldErrorf(prefix+"dockerfile_path", "%q is not a file in the build context", b.DockerfilePath)
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

// sameDefinition reports whether two versions define the same
// environment (what a job gets), whoever created them when.
func sameDefinition(a, b *asset.Environment) bool {
	sameBuild := (a.Build == nil) == (b.Build == nil) && (a.Build == nil || *a.Build == *b.Build)
	return a.Image == b.Image && sameBuild && a.CondaFile == b.CondaFile && a.OSType == b.OSType &&
		a.Description == b.Description && maps.Equal(a.Tags, b.Tags)
}
