package asset

import (
	"net/url"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// AssetCode is the kind of registered code versions: a folder of code on
// the workspace's default datastore, as azure-ai-ml registers a job's
// local code (Azure's codes/{name}/versions).
const AssetCode AssetKind = "code"

// Code is one version of a code asset: where its files lie, uploaded by
// an Azure client through Shoal's Blob endpoint.
type Code struct {
	Workspace   string            `json:"-"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// Path is the code's folder as the client gave it (Azure's codeUri):
	// a Blob URL of workspaceblobstore
	// (https://<account>.blob.<suffix>/workspaceblobstore/LocalUpload/<hash>/src)
	// or azureml://datastores/workspaceblobstore/paths/<folder>.
	Path string `json:"path"`
	// Properties are Azure's asset properties (hash_sha256 and
	// hash_version, which azure-ai-ml sends and lists versions by).
	Properties map[string]string `json:"properties,omitempty"`
	// Anonymous is a version azure-ai-ml registers for a job's local
	// code: kept like any other, hidden from lists of containers.
	Anonymous bool      `json:"anonymous,omitempty"`
	Archived  bool      `json:"archived"`
	CreatedOn time.Time `json:"created_on"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// MaxCodeProperties bounds a code version's properties.
const MaxCodeProperties = 20

// NormalizeCode checks a code version before it is created. Version may
// be empty: the service then gives the next one.
func NormalizeCode(c *Code) error {
	c.Name, c.Version, c.Path = strings.TrimSpace(c.Name), strings.TrimSpace(c.Version), strings.TrimSpace(c.Path)
	if err := normalizeVersioned(c.Name, c.Version, c.Description, c.Tags); err != nil {
		return err
	}
	if _, _, err := CodeFolder(c.Path); err != nil {
		return err
	}
	if len(c.Properties) > MaxCodeProperties {
		return core.FieldErrorf("properties", "at most %d properties are allowed, got %d", MaxCodeProperties, len(c.Properties))
	}
	for _, k := range core.SortedKeys(c.Properties) {
		if len(k) > 256 || len(c.Properties[k]) > 1024 || strings.TrimSpace(k) == "" {
			return core.FieldErrorf("properties", "a property name must be 1 to 256 characters, its value at most 1024")
		}
		if err := core.NoControl("properties."+core.Short(k), k+c.Properties[k]); err != nil {
			return err
		}
	}
	return nil
}

// SameCode reports whether two versions define the same code.
func SameCode(a, b *Code) bool { return sameDocument(a, b) }

// CodeFolder reads a code version's path: the container of Shoal's own
// store it names (workspaceblobstore) and the folder in it, without
// leading or trailing slash. A Blob URL may be host-style
// (https://<account>.blob.<suffix>/<container>/<folder>) or path-style
// as Azure's clients write it for an IP host
// (https://10.1.2.3:7420/<account>/<container>/<folder>). The host is
// not checked: the folder is read from this server's store whatever
// name the client reached it by.
func CodeFolder(p string) (container, folder string, err error) {
	bad := func(why string) error {
		return core.FieldErrorf("path", "%q %s: a code version's path is a folder of workspaceblobstore (azureml://datastores/workspaceblobstore/paths/<folder> or its Blob URL)", core.Short(p), why)
	}
	var segs []string
	switch {
	case strings.HasPrefix(p, "azureml://datastores/"):
		rest := strings.TrimPrefix(p, "azureml://datastores/")
		ds, sub, ok := strings.Cut(rest, "/paths/")
		if !ok {
			return "", "", bad("has no /paths/")
		}
		segs = append([]string{ds}, strings.Split(sub, "/")...)
	case strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://"):
		u, perr := url.Parse(p)
		if perr != nil || u.RawQuery != "" || u.Fragment != "" {
			return "", "", bad("is not a URL without query")
		}
		segs = strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
		if !strings.Contains(u.Hostname(), ".blob.") && len(segs) > 0 {
			segs = segs[1:] // path-style: the account first
		}
	default:
		return "", "", bad("is neither an azureml:// datastore URI nor a Blob URL")
	}
	for len(segs) > 0 && segs[len(segs)-1] == "" {
		segs = segs[:len(segs)-1]
	}
	if len(segs) < 2 || !strings.EqualFold(segs[0], WorkspaceBlobStore) {
		return "", "", bad("is not on " + WorkspaceBlobStore)
	}
	for _, s := range segs[1:] {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "\\\x00") {
			return "", "", bad("has an empty, '.' or '..' segment")
		}
	}
	return WorkspaceBlobStore, strings.Join(segs[1:], "/"), nil
}

// AssetKind is AssetCode.
func (*Code) AssetKind() AssetKind { return AssetCode }

// AssetMeta returns the code version's shared fields.
func (c *Code) AssetMeta() AssetMeta {
	return AssetMeta{c.Workspace, c.Name, c.Version, c.Archived, c.CreatedOn, c.CreatedBy}
}

// SetAssetMeta replaces the code version's shared fields.
func (c *Code) SetAssetMeta(a AssetMeta) {
	c.Workspace, c.Name, c.Version, c.Archived, c.CreatedOn, c.CreatedBy = a.Workspace, a.Name, a.Version, a.Archived, a.CreatedOn, a.CreatedBy
}
