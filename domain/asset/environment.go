package asset

import (
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
)

// Environment is one version of a registered environment (`az ml
// environment create`): a Docker image, a Docker build context, or a
// conda file applied on an image, which jobs reference as
// azureml:<name>:<version> or azureml:<name>@latest.
type Environment struct {
	Workspace   string            `json:"-"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Image is a Docker image reference; exactly one of Image and Build.
	Image string `json:"image,omitempty"`
	// Build is a Docker build context, uploaded as an artifact.
	Build *EnvironmentBuild `json:"build,omitempty"`
	// CondaFile is the conda file's content (the CLI reads the file the
	// YAML names), applied on Image.
	CondaFile string `json:"conda_file,omitempty"`
	// OSType is linux (Shoal's nodes run Linux containers).
	OSType string `json:"os_type,omitempty"`
	// Archived versions are left out of lists and of @latest; a job may
	// still name one by its version, as Azure allows.
	Archived  bool      `json:"archived"`
	CreatedOn time.Time `json:"created_on"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// EnvironmentBuild is a Docker build context: Path is the uploaded
// context (an artifact ID, sha256:<hex>, once the CLI has uploaded the
// folder) and DockerfilePath the Dockerfile inside it.
type EnvironmentBuild struct {
	Path           string `json:"path"`
	DockerfilePath string `json:"dockerfile_path,omitempty"`
}

// EnvironmentSpec is what a node runs a job in, resolved at submit from
// the job's environment field and stored with the job: an image, a build
// context, or a conda file on an image.
type EnvironmentSpec struct {
	Image     string            `json:"image,omitempty"`
	Build     *EnvironmentBuild `json:"build,omitempty"`
	CondaFile string            `json:"conda_file,omitempty"`
	// Source says where it came from: "inline", the registered
	// environment's azureml:<name>:<version>, or the curated name as the
	// job wrote it.
	Source string `json:"source"`
}

// Environment operating systems. Azure also knows Windows; Shoal's nodes
// run Linux containers only.
const (
	OSTypeLinux   = "linux"
	OSTypeWindows = "windows"
)

// Limits of an environment's fields.
const (
	MaxEnvironmentNameLength = 255
	// MaxEnvironmentVersionLength leaves room for the versions
	// azure-ai-ml gives anonymous assets: 32-character MD5 hashes and
	// 36-character GUIDs.
	MaxEnvironmentVersionLength = 64
	// MaxCondaFileBytes bounds a conda file's content: it is a list of
	// packages, stored with each environment version and job.
	MaxCondaFileBytes = 256 << 10
	// DefaultDockerfilePath is the Dockerfile of a build context that
	// names none, as in Azure.
	DefaultDockerfilePath = "Dockerfile"
	// curatedPrefix starts the names Azure reserves for its curated
	// environments (AzureML-sklearn-1.0-ubuntu20.04-py38-cpu).
	curatedPrefix = "azureml"
)

var (
	EnvironmentNameRE    = core.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	EnvironmentVersionRE = core.LazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// ValidateEnvironmentName checks a registered environment's name: 1 to
// 255 letters, digits, '-', '_' and '.', starting with a letter or digit,
// and not starting with AzureML (Azure reserves it for curated names).
func ValidateEnvironmentName(name string) error {
	if name == "" {
		return core.FieldErrorf("name", "is required")
	}
	if len(name) > MaxEnvironmentNameLength || !EnvironmentNameRE.MatchString(name) {
		return core.FieldErrorf("name", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit", core.Short(name), MaxEnvironmentNameLength)
	}
	if strings.HasPrefix(strings.ToLower(name), curatedPrefix) {
		return core.FieldErrorf("name", "%q starts with AzureML, which Azure reserves for its curated environments; choose another name", core.Short(name))
	}
	return nil
}

// ValidateEnvironmentVersion checks a version: 1 to 64 letters, digits,
// '-', '_' and '.', starting with a letter or digit.
func ValidateEnvironmentVersion(v string) error {
	if len(v) > MaxEnvironmentVersionLength || !EnvironmentVersionRE.MatchString(v) {
		return core.FieldErrorf("version", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit (e.g. 1, 2, 1.0.3)", core.Short(v), MaxEnvironmentVersionLength)
	}
	return nil
}

// NormalizeEnvironment checks a registered environment version before it
// is created, trimming its text and setting os_type's default. Version
// may be empty: the service then gives the next one.
func NormalizeEnvironment(e *Environment) error {
	e.Name, e.Version = strings.TrimSpace(e.Name), strings.TrimSpace(e.Version)
	if err := ValidateEnvironmentName(e.Name); err != nil {
		return err
	}
	if e.Version != "" {
		if err := ValidateEnvironmentVersion(e.Version); err != nil {
			return err
		}
	}
	if err := core.NoControl("description", e.Description); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(e.Description); n > core.MaxDescriptionLength {
		return core.FieldErrorf("description", "must be at most %d characters long (it has %d)", core.MaxDescriptionLength, n)
	}
	if err := core.ValidateTags(e.Tags); err != nil {
		return err
	}
	switch e.OSType = strings.ToLower(strings.TrimSpace(e.OSType)); e.OSType {
	case "":
		e.OSType = OSTypeLinux
	case OSTypeLinux:
	case OSTypeWindows:
		return core.FieldErrorf("os_type", "windows is not supported: Shoal's nodes run Linux containers (use os_type: linux)")
	default:
		return core.FieldErrorf("os_type", "%q must be linux", core.Short(e.OSType))
	}
	e.Image = strings.TrimSpace(e.Image)
	return ValidateEnvironmentParts("", e.Image, e.Build, e.CondaFile)
}

// ValidateEnvironmentParts checks the rules an inline and a registered
// environment share: exactly one of image and build, a conda file only on
// an image, a valid image reference and build context. prefix is the
// fields' prefix ("environment." for a job's inline environment).
func ValidateEnvironmentParts(prefix, image string, build *EnvironmentBuild, conda string) error {
	whole := strings.TrimSuffix(prefix, ".")
	if whole == "" {
		whole = "image"
	}
	switch {
	case image == "" && build == nil:
		return core.FieldErrorf(whole, "needs image (a Docker image) or build (a mapping with path, the Docker build context)")
	case image != "" && build != nil:
		return core.FieldErrorf(prefix+"build", "give image or build, not both: an environment is an image, or built from a context")
	case conda != "" && image == "":
		return core.FieldErrorf(prefix+"conda_file", "needs image: the conda file is applied on an image that has conda or mamba (Azure's rule; for a build, install the packages in the Dockerfile)")
	}
	if image != "" {
		if err := ValidateImageReference(prefix+"image", image); err != nil {
			return err
		}
	}
	if conda != "" {
		if len(conda) > MaxCondaFileBytes {
			return core.FieldErrorf(prefix+"conda_file", "is %d bytes, more than the %d a conda file may have", len(conda), MaxCondaFileBytes)
		}
		if strings.ContainsRune(conda, 0) {
			return core.FieldErrorf(prefix+"conda_file", "must be text, without NUL characters")
		}
	}
	if build != nil {
		if err := core.ValidatePath(prefix+"build.path", build.Path); err != nil {
			return err
		}
		build.DockerfilePath = strings.TrimSpace(build.DockerfilePath)
		if build.DockerfilePath == "" {
			build.DockerfilePath = DefaultDockerfilePath
		}
		if err := ValidateDockerfilePath(prefix+"build.dockerfile_path", build.DockerfilePath); err != nil {
			return err
		}
	}
	return nil
}

// ValidateDockerfilePath checks a Dockerfile's path inside a build
// context: relative, on one line, and not leaving the context.
func ValidateDockerfilePath(field, p string) error {
	if err := core.ValidatePath(field, p); err != nil {
		return err
	}
	clean := path.Clean(strings.ReplaceAll(p, "\\", "/"))
	if path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return core.FieldErrorf(field, "%q must be a file inside the build context (a relative path such as Dockerfile or docker/train.Dockerfile)", core.Short(p))
	}
	return nil
}

// AssetKind is AssetEnvironment.
func (*Environment) AssetKind() AssetKind { return AssetEnvironment }

// AssetMeta returns the environment version's shared fields.
func (e *Environment) AssetMeta() AssetMeta {
	return AssetMeta{e.Workspace, e.Name, e.Version, e.Archived, e.CreatedOn, e.CreatedBy}
}

// SetAssetMeta replaces the environment version's shared fields.
func (e *Environment) SetAssetMeta(m AssetMeta) {
	e.Workspace, e.Name, e.Version, e.Archived, e.CreatedOn, e.CreatedBy = m.Workspace, m.Name, m.Version, m.Archived, m.CreatedOn, m.CreatedBy
}
