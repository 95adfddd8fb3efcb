package asset

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// LabelLatest is the one label Azure's references know: the version
// created last that is not archived.
const LabelLatest = "latest"

// CuratedRegistry is Azure's registry of curated environments
// (azureml://registries/azureml/...).
const CuratedRegistry = "azureml"

// EnvironmentRef is a job's reference to an environment, parsed from
// azureml:<name>:<version>, azureml:<name>@latest,
// azureml://registries/<registry>/environments/<name>/versions/<version>
// (or .../labels/latest), or a workspace's ARM resource ID
// (.../workspaces/<ws>/environments/<name>/versions/<version>).
type EnvironmentRef struct {
	// Written is the reference as the job wrote it.
	Written string
	Name    string
	// Version is empty when Label is set.
	Version string
	Label   string
	// Registry names the registry of an azureml://registries reference.
	Registry string
	// Workspace names the workspace of an ARM resource ID.
	Workspace string
}

// Curated reports whether the reference names one of Azure's curated
// environments: one in the azureml registry, or a name Azure reserves
// (AzureML-...).
func (r EnvironmentRef) Curated() bool {
	return strings.EqualFold(r.Registry, CuratedRegistry) ||
		r.Registry == "" && strings.HasPrefix(strings.ToLower(r.Name), curatedPrefix)
}

// ParseEnvironmentRef parses a job's environment reference. The error
// names the field environment and the forms it takes.
func ParseEnvironmentRef(s string) (EnvironmentRef, error) {
	const forms = "an environment reference is azureml:<name>:<version>, azureml:<name>@latest, or azureml://registries/azureml/environments/<name>/labels/latest; an inline environment is a mapping with image, build or conda_file"
	r := EnvironmentRef{Written: s}
	rest, ok := CutPrefixFold(strings.TrimSpace(s), "azureml:")
	if !ok && !strings.HasPrefix(strings.ToLower(s), "/subscriptions/") {
		return r, core.FieldErrorf("environment", "%q is not an environment reference: %s", core.Short(s), forms)
	}
	if p, ok := strings.CutPrefix(rest, "//"); ok {
		// azureml://registries/<registry>/environments/<name>/(versions/<v>|labels/<l>)
		parts := strings.Split(p, "/")
		if len(parts) != 6 || !strings.EqualFold(parts[0], "registries") || !strings.EqualFold(parts[2], "environments") {
			return r, core.FieldErrorf("environment", "%q is not a registry reference (azureml://registries/<registry>/environments/<name>/versions/<version> or .../labels/latest); %s", core.Short(s), forms)
		}
		r.Registry, r.Name = parts[1], parts[3]
		if err := r.setVersionOrLabel(parts[4], parts[5]); err != nil {
			return r, err
		}
		return r, r.checkName()
	}
	if strings.HasPrefix(strings.ToLower(rest), "/subscriptions/") || strings.HasPrefix(strings.ToLower(s), "/subscriptions/") {
		if !ok {
			rest = s
		}
		parts := strings.Split(strings.Trim(rest, "/"), "/")
		n := len(parts)
		if n < 6 || !strings.EqualFold(parts[n-6], "workspaces") || !strings.EqualFold(parts[n-4], "environments") {
			return r, core.FieldErrorf("environment", "%q is not an environment resource ID (.../workspaces/<workspace>/environments/<name>/versions/<version>)", core.Short(s))
		}
		r.Workspace, r.Name = parts[n-5], parts[n-3]
		if err := r.setVersionOrLabel(parts[n-2], parts[n-1]); err != nil {
			return r, err
		}
		return r, r.checkName()
	}
	if name, label, ok := strings.Cut(rest, "@"); ok {
		r.Name = name
		if err := r.setVersionOrLabel("labels", label); err != nil {
			return r, err
		}
		return r, r.checkName()
	}
	name, version, ok := strings.Cut(rest, ":")
	if !ok {
		return r, core.FieldErrorf("environment", "%q names no version: write azureml:%s:<version> or azureml:%s@latest", core.Short(s), core.Short(rest), core.Short(rest))
	}
	r.Name = name
	if err := r.setVersionOrLabel("versions", version); err != nil {
		return r, err
	}
	return r, r.checkName()
}

func (r *EnvironmentRef) setVersionOrLabel(kind, v string) error {
	switch strings.ToLower(kind) {
	case "versions":
		if ValidateEnvironmentVersion(v) != nil {
			return core.FieldErrorf("environment", "%q has an invalid version %q: a version is 1 to %d letters, digits, '-', '_' and '.'", core.Short(r.Written), core.Short(v), MaxEnvironmentVersionLength)
		}
		r.Version = v
	case "labels":
		if !strings.EqualFold(v, LabelLatest) {
			return core.FieldErrorf("environment", "%q has label %q: the only label is latest (@latest)", core.Short(r.Written), core.Short(v))
		}
		r.Label = LabelLatest
	default:
		return core.FieldErrorf("environment", "%q must end in versions/<version> or labels/latest", core.Short(r.Written))
	}
	return nil
}

func (r *EnvironmentRef) checkName() error {
	if r.Name == "" || len(r.Name) > MaxEnvironmentNameLength || !EnvironmentNameRE.MatchString(r.Name) {
		return core.FieldErrorf("environment", "%q has an invalid name %q: a name is 1 to %d letters, digits, '-', '_' and '.'", core.Short(r.Written), core.Short(r.Name), MaxEnvironmentNameLength)
	}
	return nil
}

// CutPrefixFold is strings.CutPrefix, comparing case-insensitively.
func CutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// CuratedEnvironments maps Azure's curated environment names to the
// images an operator provides (the server config's
// curated_environments). A key is a name (every version of it) or
// name:version (that version alone); keys compare case-insensitively.
type CuratedEnvironments map[string]string

// ValidateCuratedEnvironments checks the server config's
// curated_environments: each key a name or name:version, each value an
// image reference.
func ValidateCuratedEnvironments(m map[string]string) error {
	for _, k := range core.SortedKeys(m) {
		field := "curated_environments." + k
		name, version, hasVersion := strings.Cut(k, ":")
		if name == "" || len(name) > MaxEnvironmentNameLength || !EnvironmentNameRE.MatchString(name) {
			return core.FieldErrorf(field, "%q is not a curated environment name (such as AzureML-sklearn-1.0-ubuntu20.04-py38-cpu or sklearn-1.5, optionally :<version>)", core.Short(k))
		}
		if hasVersion && ValidateEnvironmentVersion(version) != nil {
			return core.FieldErrorf(field, "%q has an invalid version %q", core.Short(k), core.Short(version))
		}
		if err := ValidateImageReference(field, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// lookup returns the image mapped to a curated reference: name:version
// first, then the name alone.
func (c CuratedEnvironments) lookup(r EnvironmentRef) (string, bool) {
	var keys []string
	if r.Version != "" {
		keys = append(keys, r.Name+":"+r.Version)
	}
	keys = append(keys, r.Name)
	for _, want := range keys {
		for k, v := range c {
			if strings.EqualFold(k, want) {
				return v, true
			}
		}
	}
	return "", false
}

// ResolveJobEnvironment turns a job's environment field (as
// NormalizeJobSpec left it) into what its nodes run, reading registered
// environments in tx: an inline mapping as written, a registered version
// (azureml:<name>:<version>, or @latest: the version created last that is
// not archived), or a curated name through curated. A reference that
// names nothing is refused with how to make it name something. A job
// without environment gets nil.
func ResolveJobEnvironment(tx AssetReader, workspace string, env any, curated CuratedEnvironments) (*EnvironmentSpec, error) {
	switch e := env.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return inlineEnvironmentSpec(e)
	case string:
		r, err := ParseEnvironmentRef(e)
		if err != nil {
			return nil, err
		}
		return resolveEnvironmentRef(tx, workspace, r, curated)
	}
	return nil, core.FieldErrorf("environment", "must be an environment reference or a mapping")
}

func resolveEnvironmentRef(tx AssetReader, workspace string, r EnvironmentRef, curated CuratedEnvironments) (*EnvironmentSpec, error) {
	if r.Curated() {
		image, ok := curated.lookup(r)
		if !ok {
			return nil, &core.Error{Code: core.EINVALID, Field: "environment", Message: fmt.Sprintf(
				"environment: %q is one of Azure's curated environments, which this server maps to no image. "+
					"An operator maps it to an image with the same packages in the server's config file (then restarts the server):\n\n"+
					"curated_environments:\n  %s: <image>   # e.g. registry.example.com/azureml/%s:latest\n\n"+
					"or the job names an image of its own (environment: {image: ...}) or a registered environment (azureml:<name>@latest)",
				r.Written, r.Name, strings.ToLower(r.Name))}
		}
		return &EnvironmentSpec{Image: image, Source: r.Written}, nil
	}
	if r.Registry != "" {
		return nil, core.FieldErrorf("environment", "%q is in registry %q: Shoal knows the environments registered in the workspace and Azure's curated ones (registry azureml) that the server maps to images", core.Short(r.Written), r.Registry)
	}
	if r.Workspace != "" && !strings.EqualFold(r.Workspace, workspace) {
		return nil, core.FieldErrorf("environment", "%q is in workspace %q, not in the job's workspace %q: register it in %s", core.Short(r.Written), r.Workspace, workspace, workspace)
	}
	var (
		reg *Environment
		err error
	)
	if r.Label == LabelLatest {
		reg, err = LatestAssetVersion[*Environment](tx, workspace, r.Name)
	} else {
		reg, err = GetAssetVersion[*Environment](tx, workspace, r.Name, r.Version)
	}
	if core.ErrorCode(err) == core.ENOTFOUND {
		what := fmt.Sprintf("has no version %q", r.Version)
		if r.Label != "" {
			what = "is not registered (or every version is archived)"
		}
		return nil, &core.Error{Code: core.ENOTFOUND, Field: "environment", Message: fmt.Sprintf(
			"environment: %q names environment %q, which %s in workspace %q; register it with `shoal environment create --name %s --image <image>` (or -f env.yml), and see what exists with `shoal environment list`",
			core.Short(r.Written), r.Name, what, workspace, r.Name)}
	} else if err != nil {
		return nil, err
	}
	return &EnvironmentSpec{Image: reg.Image, Build: reg.Build, CondaFile: reg.CondaFile, Source: "azureml:" + reg.Name + ":" + reg.Version}, nil
}

// inlineEnvironmentSpec reads a job's inline environment (checked by
// NormalizeJobSpec). A conda_file given as a mapping (the SDK's dict) is
// kept as its JSON, which is YAML too.
func inlineEnvironmentSpec(m map[string]any) (*EnvironmentSpec, error) {
	spec := &EnvironmentSpec{Source: "inline"}
	spec.Image, _ = m["image"].(string)
	if b, ok := m["build"].(map[string]any); ok {
		spec.Build = &EnvironmentBuild{}
		spec.Build.Path, _ = b["path"].(string)
		spec.Build.DockerfilePath, _ = b["dockerfile_path"].(string)
		if spec.Build.DockerfilePath == "" {
			spec.Build.DockerfilePath = DefaultDockerfilePath
		}
	}
	conda, err := CondaFileText("environment.conda_file", m["conda_file"])
	if err != nil {
		return nil, err
	}
	// Azure's YAML names a conda file by its path, which the CLI replaces
	// with the content; a path that reaches the server names a file it
	// cannot read.
	if !strings.Contains(conda, "\n") && (strings.HasSuffix(conda, ".yml") || strings.HasSuffix(conda, ".yaml")) {
		return nil, core.FieldErrorf("environment.conda_file", "%q is a file name: the server needs the file's content (`shoal job create -f` reads the file and sends it)", core.Short(conda))
	}
	spec.CondaFile = conda
	return spec, nil
}

// CondaFileText returns a conda_file's content: a string as written, a
// mapping as JSON.
func CondaFileText(field string, v any) (string, error) {
	switch c := v.(type) {
	case nil:
		return "", nil
	case string:
		return c, nil
	case map[string]any:
		b, err := json.Marshal(c)
		if err != nil {
			return "", core.FieldErrorf(field, "must be the conda file's content or a mapping")
		}
		return string(b), nil
	}
	return "", core.FieldErrorf(field, "must be the conda file's content (the CLI reads the file it names) or a mapping")
}
