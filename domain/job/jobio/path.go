package jobio

import (
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"

	"github.com/shoal-ml/shoal/domain/core"
)

// Kind is what kind of place an input's or output's path names. It is
// read from the path's prefix only: the full parse of a datastore URI,
// an asset reference or a storage URL (asset.ParseDataURI) is the
// resolver's, which this classification hands each path to.
type Kind int

// The kinds of path.
const (
	// Local is a path on the submitter's machine, which the CLI uploads
	// before it submits; the server refuses one.
	Local Kind = iota
	// Uploaded is an artifact the CLI uploaded: sha256:<64 hex>.
	Uploaded
	// AssetRef is a registered data asset or model:
	// azureml:<name>:<version>, azureml:<name>@latest, or
	// azureml://.../data/<name>/versions/<v> (models alike).
	AssetRef
	// DatastoreURI is azureml://datastores/<ds>/paths/<p> or its long
	// form azureml://subscriptions/.../workspaces/<ws>/datastores/<ds>/paths/<p>.
	DatastoreURI
	// URL is <scheme>://...: https, http, wasbs, abfss or s3 (others are
	// refused by CheckInputPath).
	URL
)

// String names the kind for messages.
func (k Kind) String() string {
	switch k {
	case Uploaded:
		return "uploaded artifact"
	case AssetRef:
		return "asset reference"
	case DatastoreURI:
		return "datastore URI"
	case URL:
		return "URL"
	}
	return "local path"
}

// Remote reports whether a path of this kind names something the server
// resolves (an asset, a datastore path or a URL), not a file the CLI
// uploads or uploaded.
func (k Kind) Remote() bool { return k == AssetRef || k == DatastoreURI || k == URL }

// URLSchemes are the schemes a URL input may have.
var URLSchemes = []string{"https", "http", "wasbs", "abfss", "s3"}

// DefaultOutputPath is where an output without a path is kept, as Azure
// keeps it: ${{name}} is the job's name, ${{output_name}} the output's.
const DefaultOutputPath = "azureml://datastores/workspaceblobstore/paths/azureml/${{name}}/${{output_name}}/"

const artifactPrefix = "sha256:"

// schemeRE matches a URL's scheme as RFC 3986 spells one, with "://".
var schemeRE = core.LazyRegexp(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// PathKind classifies a path by its prefix (case-insensitive, spaces
// around it ignored). A path with "file:" before it is Local, as the CLI
// reads it.
func PathKind(p string) Kind {
	p = strings.TrimSpace(p)
	lower := strings.ToLower(p)
	switch {
	case IsArtifactRef(p):
		return Uploaded
	case strings.HasPrefix(lower, "azureml://"):
		if hasSegment(lower[len("azureml://"):], "datastores") {
			return DatastoreURI
		}
		return AssetRef
	case strings.HasPrefix(lower, "azureml:"):
		return AssetRef
	case schemeRE.MatchString(p):
		return URL
	}
	return Local
}

// IsArtifactRef reports whether s is an uploaded artifact ID: "sha256:"
// and 64 lower-case hexadecimal digits.
func IsArtifactRef(s string) bool {
	h, ok := strings.CutPrefix(s, artifactPrefix)
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func hasSegment(p, seg string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == seg {
			return true
		}
	}
	return false
}

// CheckInputPath checks an input's path: on one line, not blank, and,
// for a remote kind, a supported scheme without ".." segments,
// backslashes or NUL (CheckRemotePath). A local path is the CLI's to
// read and is left to it.
func CheckInputPath(field, p string) error {
	if err := core.ValidatePath(field, p); err != nil {
		return err
	}
	if PathKind(p).Remote() {
		return CheckRemotePath(field, p)
	}
	return nil
}

// CheckRemotePath refuses what no remote path may hold, whatever its
// kind: NUL, backslashes and ".." segments (also percent-encoded), which
// would climb out of the datastore path or container a user was given;
// a URL scheme Shoal cannot read; an azureml: reference with nothing
// after it.
func CheckRemotePath(field, p string) error {
	p = strings.TrimSpace(p)
	switch {
	case strings.ContainsRune(p, 0):
		return core.FieldErrorf(field, "must not contain NUL characters")
	case strings.ContainsRune(p, '\\'):
		return core.FieldErrorf(field, "%q must not contain backslashes: a remote path separates folders with '/'", core.Short(p))
	}
	rest := p
	switch PathKind(p) {
	case URL:
		m := schemeRE.FindStringSubmatch(p)
		scheme := strings.ToLower(m[1])
		if !contains(URLSchemes, scheme) {
			return core.FieldErrorf(field, "%q: scheme %s is not supported; a remote input is https://, http://, wasbs://, abfss://, s3://, azureml://datastores/<datastore>/paths/<path> or azureml:<name>:<version>", core.Short(p), scheme)
		}
		rest = p[len(m[0]):]
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		if strings.Trim(rest, "/") == "" {
			return core.FieldErrorf(field, "%q names no host or bucket", core.Short(p))
		}
	case AssetRef, DatastoreURI:
		rest = strings.TrimPrefix(p[len("azureml:"):], "//")
		if strings.Trim(rest, "/") == "" {
			return core.FieldErrorf(field, "%q names nothing after azureml:; give azureml:<name>:<version>, azureml:<name>@latest or azureml://datastores/<datastore>/paths/<path>", core.Short(p))
		}
	}
	for _, seg := range strings.Split(rest, "/") {
		if dec, err := url.PathUnescape(seg); seg == ".." || (err == nil && (dec == ".." || strings.ContainsAny(dec, "/\\\x00"))) {
			return core.FieldErrorf(field, "%q must not contain '..' segments (or encoded '/', '\\' or NUL): a path stays inside the datastore or container it names", core.Short(p))
		}
	}
	// The deep parse is the one every data path goes through (data
	// assets, datastores' URLs, the server's resolution).
	if strings.HasPrefix(strings.ToLower(p), "azureml://jobs/") {
		return nil // a pipeline's binding of another step's output
	}
	_, err := asset.CheckDataURI(field, p)
	return err
}

// outputRefRE matches a ${{...}} placeholder in an output path.
var outputRefRE = core.LazyRegexp(`\$\{\{(.*?)\}\}`)

// CheckOutputPath checks an output's path: a datastore URI
// (azureml://datastores/<datastore>/paths/<path> or its long form) whose
// only placeholders are ${{name}}, ${{output_name}} and
// ${{default_datastore}}, as Azure takes.
func CheckOutputPath(field, p string) error {
	if err := core.ValidatePath(field, p); err != nil {
		return err
	}
	if k := PathKind(p); k != DatastoreURI {
		a := "a"
		if k == AssetRef {
			a = "an"
		}
		return core.FieldErrorf(field, "%q is %s %s; an output's path is a datastore URI: azureml://datastores/<datastore>/paths/<path> (${{name}} and ${{output_name}} may appear in it)", core.Short(p), a, k)
	}
	for _, m := range outputRefRE.FindAllStringSubmatch(p, -1) {
		switch strings.TrimSpace(m[1]) {
		case "name", "output_name", "default_datastore":
		default:
			return core.FieldErrorf(field, "%s is not a placeholder an output path takes; use ${{name}} (the job's name), ${{output_name}} or ${{default_datastore}}", core.Short(m[0]))
		}
	}
	return CheckRemotePath(field, ExpandOutputPath(p, "name", "output_name"))
}

// ExpandOutputPath puts the job's name and the output's name in place of
// ${{name}} and ${{output_name}} in an output path, and the workspace's
// file store (workspaceblobstore) in place of ${{default_datastore}} (spaces inside the
// braces allowed). An empty path is DefaultOutputPath.
func ExpandOutputPath(path, jobName, outputName string) string {
	if path == "" {
		path = DefaultOutputPath
	}
	return outputRefRE.ReplaceAllStringFunc(path, func(ref string) string {
		switch strings.TrimSpace(ref[3 : len(ref)-2]) {
		case "name":
			return jobName
		case "output_name":
			return outputName
		case "default_datastore":
			// Shoal keeps every output in the workspace's file store
			// (settings.default_datastore is recorded and ignored).
			return asset.WorkspaceBlobStore
		}
		return ref
	})
}
