package asset

import (
	"errors"
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// DataURIKind is the kind of place a data URI names.
type DataURIKind string

// The kinds of data URIs (ParseDataURI).
const (
	// URIDatastore: azureml://datastores/<ds>/paths/<p>, or its long form
	// azureml://subscriptions/.../workspaces/<ws>/datastores/<ds>/paths/<p>.
	URIDatastore DataURIKind = "datastore"
	// URIAsset: a registered data asset or model: azureml:<name>:<version>,
	// azureml:<name>@latest, azureml://.../data/<name>/versions/<v>,
	// azureml://.../models/<name>/versions/<v>.
	URIAsset DataURIKind = "asset"
	// URIBlob: https://<account>.blob.<suffix>/<container>/<path> or
	// wasbs://<container>@<account>.blob.<suffix>/<path>.
	URIBlob DataURIKind = "azure_blob"
	// URIADLS: abfss://<fs>@<account>.dfs.<suffix>/<path>.
	URIADLS DataURIKind = "azure_data_lake_gen2"
	// URIS3: s3://<bucket>/<key>.
	URIS3 DataURIKind = "s3"
	// URIHTTP: any other http(s):// URL, fetched with a plain GET.
	URIHTTP DataURIKind = "http"
	// URILocal: anything else is a local path, the CLI's to upload.
	URILocal DataURIKind = "local"
)

// DataURI is a parsed data URI. Only the fields of its Kind are set.
type DataURI struct {
	Kind DataURIKind
	// Raw is the URI as given.
	Raw string
	// Datastore (URIDatastore) and, in long forms, Workspace.
	Datastore string
	Workspace string
	// Path is the path inside the datastore, container, filesystem or
	// bucket, without a leading '/', as written (percent-decoded for
	// URLs); a trailing '/' (a folder) is kept. For URILocal it is the
	// local path.
	Path string
	// AssetType is "data" or "model" for long asset forms, "" for the
	// short azureml:<name>:<version> form (the input's type says).
	AssetType string
	// Name, Version and Label (only "latest") of an asset reference.
	Name    string
	Version string
	Label   string
	// Account, Container (the filesystem of abfss) and EndpointSuffix
	// (core.windows.net) of URIBlob and URIADLS; Scheme is the URL's.
	Account        string
	Container      string
	EndpointSuffix string
	Scheme         string
	// Bucket of URIS3.
	Bucket string
	// URL is the whole URL of URIBlob (https form) and URIHTTP.
	URL string
}

// ParseDataURI parses where data is: every kind of DataURIKind. A path
// with '..' segments, NUL or other control characters, or backslashes is
// refused, as is a scheme Shoal does not read; the error names the field
// "path" and the rule.
func ParseDataURI(s string) (DataURI, error) {
	u := DataURI{Raw: s}
	if s == "" {
		return u, core.FieldErrorf("path", "is required")
	}
	if len(s) > 4096 {
		return u, core.FieldErrorf("path", "must be at most 4096 bytes")
	}
	if strings.ContainsFunc(s, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return u, core.FieldErrorf("path", "must not contain NUL or other control characters")
	}
	lower := strings.ToLower(s)
	if !strings.HasPrefix(lower, "azureml:") && !strings.Contains(s, "://") {
		// A local path is the CLI's, relative to the YAML file: ../data
		// is as Azure's examples write it.
		u.Kind, u.Path = URILocal, strings.TrimPrefix(s, "file:")
		return u, nil
	}
	if err := checkDataPath(s); err != nil {
		return u, err
	}
	switch {
	case strings.HasPrefix(lower, "azureml://"):
		return parseAzureMLLong(u, s[len("azureml://"):])
	case strings.HasPrefix(lower, "azureml:"):
		return parseAzureMLShort(u, s[len("azureml:"):])
	}
	scheme, rest, _ := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "https", "http":
		return parseHTTPDataURI(u, s, scheme)
	case "wasbs", "wasb", "abfss", "abfs":
		return parseAzureAuthority(u, scheme, rest)
	case "s3":
		bucket, key, _ := strings.Cut(rest, "/")
		if !bucketNameRE.MatchString(bucket) {
			return u, core.FieldErrorf("path", "%q: the bucket %q must be 3 to 63 lower-case letters, digits, '.' and '-' (s3://<bucket>/<key>)", core.Short(s), core.Short(bucket))
		}
		u.Kind, u.Bucket, u.Path, u.Scheme = URIS3, bucket, key, scheme
		return u, nil
	}
	return u, core.FieldErrorf("path", "%q: the scheme %s:// is not one Shoal reads (azureml://, https://, http://, wasbs://, abfss://, s3://, or a local path)", core.Short(s), core.Short(scheme))
}

// checkDataPath refuses what no data path may hold: '..' segments (in
// clear or percent-encoded), control characters (NUL included) and
// backslashes.
func checkDataPath(s string) error {
	if strings.ContainsFunc(s, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return core.FieldErrorf("path", "must not contain NUL or other control characters")
	}
	if strings.Contains(s, `\`) {
		return core.FieldErrorf("path", "%q must not contain backslashes: write paths with '/'", core.Short(s))
	}
	dec := s
	// Decode percent-escapes until stable (bounded), so %2e%2e and
	// %252e%252e are seen as the '..' a server may decode them to.
	for range 3 {
		d, err := url.PathUnescape(dec)
		if err != nil || d == dec {
			break
		}
		dec = d
	}
	if dec != s {
		if strings.ContainsFunc(dec, func(c rune) bool { return c < ' ' || c == 0x7f }) {
			return core.FieldErrorf("path", "must not contain NUL or other control characters, encoded or not")
		}
		if strings.Contains(dec, `\`) {
			return core.FieldErrorf("path", "%q must not contain backslashes, encoded or not", core.Short(s))
		}
	}
	for _, v := range []string{s, dec} {
		// the part after a scheme's "//" (or the whole) split on '/'
		body := v
		if _, rest, ok := strings.Cut(v, "://"); ok {
			body = rest
		}
		body, _, _ = strings.Cut(body, "?")
		for _, seg := range strings.Split(body, "/") {
			if seg == ".." {
				return core.FieldErrorf("path", "%q must not have '..' segments", core.Short(s))
			}
		}
	}
	return nil
}

// parseAzureMLShort parses azureml:<name>:<version> and
// azureml:<name>@latest.
func parseAzureMLShort(u DataURI, rest string) (DataURI, error) {
	u.Kind = URIAsset
	if name, label, ok := strings.Cut(rest, "@"); ok {
		if label != "latest" {
			return u, core.FieldErrorf("path", "%q: the label %q is not one Shoal knows: write azureml:<name>@latest or azureml:<name>:<version>", core.Short(u.Raw), core.Short(label))
		}
		u.Name, u.Label = name, label
	} else if name, version, ok := strings.Cut(rest, ":"); ok {
		u.Name, u.Version = name, version
		if err := ValidateEnvironmentVersion(version); err != nil {
			return u, core.FieldErrorf("path", "%q: the version %q must be 1 to 30 letters, digits, '-', '_' and '.'", core.Short(u.Raw), core.Short(version))
		}
	} else {
		return u, core.FieldErrorf("path", "%q names no version: write azureml:<name>:<version> or azureml:<name>@latest", core.Short(u.Raw))
	}
	if err := ValidateDatastoreName(u.Name); err != nil {
		return u, core.FieldErrorf("path", "%q: the asset name %q must be 1 to 255 letters, digits, '-', '_' and '.', starting with a letter or digit", core.Short(u.Raw), core.Short(u.Name))
	}
	return u, nil
}

// parseAzureMLLong parses the azureml:// forms: datastore paths and
// asset versions, short (azureml://datastores/...) or long
// (azureml://subscriptions/<s>/resourcegroups/<rg>/workspaces/<ws>/...).
func parseAzureMLLong(u DataURI, rest string) (DataURI, error) {
	segs := strings.Split(rest, "/")
	bad := func(rule string) (DataURI, error) {
		return u, core.FieldErrorf("path", "%q %s", core.Short(u.Raw), rule)
	}
	i := 0
	if len(segs) > 0 && strings.EqualFold(segs[0], "subscriptions") {
		// subscriptions/<s>/resourcegroups/<rg>/(providers/Microsoft.MachineLearningServices/)?workspaces/<ws>/
		if len(segs) < 6 || !strings.EqualFold(segs[2], "resourcegroups") {
			return bad("is not azureml://subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/...")
		}
		i = 4
		if strings.EqualFold(segs[i], "providers") && i+1 < len(segs) {
			i += 2
		}
		if i+1 >= len(segs) || !strings.EqualFold(segs[i], "workspaces") || segs[i+1] == "" {
			return bad("is not azureml://subscriptions/<sub>/resourcegroups/<rg>/workspaces/<ws>/...")
		}
		u.Workspace = segs[i+1]
		i += 2
	} else if len(segs) > 3 && strings.EqualFold(segs[0], "locations") && strings.EqualFold(segs[2], "workspaces") && segs[3] != "" {
		// locations/<region>/workspaces/<ws>/...: the form Azure's
		// studio copies for an asset.
		u.Workspace = segs[3]
		i = 4
	} else if len(segs) > 0 && strings.EqualFold(segs[0], "registries") {
		return bad("names a registry: assets shared through registries are not supported by Shoal; register the asset in the workspace")
	}
	if i >= len(segs) {
		return bad("names no datastore or asset: write azureml://datastores/<datastore>/paths/<path>")
	}
	switch strings.ToLower(segs[i]) {
	case "datastores":
		if i+2 >= len(segs) || segs[i+1] == "" || !strings.EqualFold(segs[i+2], "paths") {
			return bad("is not a datastore path: write azureml://datastores/<datastore>/paths/<path>")
		}
		u.Kind, u.Datastore, u.Path = URIDatastore, segs[i+1], strings.Join(segs[i+3:], "/")
		if err := ValidateDatastoreName(u.Datastore); err != nil {
			return bad("names a datastore that breaks the name rule: 1 to 255 letters, digits, '-', '_' and '.'")
		}
		return u, nil
	case "data", "models":
		if len(segs) != i+4 || !strings.EqualFold(segs[i+2], "versions") || segs[i+1] == "" || segs[i+3] == "" {
			return bad("is not an asset version: write azureml://" + strings.ToLower(segs[i]) + "/<name>/versions/<version>")
		}
		u.Kind, u.Name, u.Version = URIAsset, segs[i+1], segs[i+3]
		u.AssetType = "data"
		if strings.EqualFold(segs[i], "models") {
			u.AssetType = "model"
		}
		if ValidateDatastoreName(u.Name) != nil || ValidateEnvironmentVersion(u.Version) != nil {
			return bad("names an asset or version that breaks the name rule: letters, digits, '-', '_' and '.'")
		}
		return u, nil
	}
	return bad("is not a datastore path or an asset: write azureml://datastores/<datastore>/paths/<path> or azureml:<name>:<version>")
}

// parseHTTPDataURI parses an http(s) URL: a Blob URL
// (https://<account>.blob.<suffix>/<container>/<path>) or any other URL.
func parseHTTPDataURI(u DataURI, s, scheme string) (DataURI, error) {
	p, err := url.Parse(s)
	if err != nil || p.Host == "" {
		return u, core.FieldErrorf("path", "%q is not a URL with a host", core.Short(s))
	}
	if p.User != nil {
		return u, core.FieldErrorf("path", "must not hold user info: credentials come from the workspace's datastore that owns the account or bucket")
	}
	u.Scheme, u.URL = scheme, s
	host := strings.ToLower(p.Hostname())
	if acct, suffix, ok := strings.Cut(host, ".blob."); ok && p.Port() == "" && accountNameRE.MatchString(acct) {
		container, key, _ := strings.Cut(strings.TrimPrefix(p.Path, "/"), "/")
		if containerNameRE.MatchString(container) || container == "$root" {
			u.Kind, u.Account, u.EndpointSuffix, u.Container, u.Path = URIBlob, acct, suffix, container, key
			return u, nil
		}
	}
	u.Kind, u.Path = URIHTTP, strings.TrimPrefix(p.Path, "/")
	return u, nil
}

// parseAzureAuthority parses wasbs://<container>@<account>.blob.<suffix>/<path>
// and abfss://<fs>@<account>.dfs.<suffix>/<path>.
func parseAzureAuthority(u DataURI, scheme, rest string) (DataURI, error) {
	authority, p, _ := strings.Cut(rest, "/")
	container, host, ok := strings.Cut(authority, "@")
	service := ".blob."
	kind := URIBlob
	if strings.HasPrefix(scheme, "abfs") {
		service, kind = ".dfs.", URIADLS
	}
	form := scheme + "://<container>@<account>" + service + "<suffix>/<path>"
	if !ok {
		return u, core.FieldErrorf("path", "%q is not %s", core.Short(u.Raw), form)
	}
	acct, suffix, ok := strings.Cut(strings.ToLower(host), service)
	if !ok || !accountNameRE.MatchString(acct) || suffix == "" || strings.ContainsAny(suffix, ":/") {
		return u, core.FieldErrorf("path", "%q is not %s", core.Short(u.Raw), form)
	}
	if !containerNameRE.MatchString(container) {
		return u, core.FieldErrorf("path", "%q: the container %q must be 3 to 63 lower-case letters, digits and single hyphens", core.Short(u.Raw), core.Short(container))
	}
	u.Kind, u.Scheme, u.Account, u.EndpointSuffix, u.Container, u.Path = kind, scheme, acct, suffix, container, p
	return u, nil
}

// OwningDatastore returns the datastore among list that owns the place u
// names, whose credentials a fetch of u uses, or nil (anonymous):
//   - URIDatastore: the datastore of that name;
//   - URIBlob, URIADLS: an azure_blob or azure_data_lake_gen2 datastore of
//     the same account, container (filesystem) and endpoint suffix;
//   - URIS3: the s3 datastore of the bucket;
//   - URIHTTP: a datastore whose own URL the URL starts with: an
//     azure_blob's path-style service URL and container (Azurite), or an
//     s3's endpoint_url and bucket (path-style).
//
// When several match, the first in list order wins.
func OwningDatastore(u DataURI, list []*Datastore) *Datastore {
	for _, d := range list {
		if ownsURI(d, u) {
			return d
		}
	}
	return nil
}

func ownsURI(d *Datastore, u DataURI) bool {
	switch u.Kind {
	case URIDatastore:
		return strings.EqualFold(d.Name, u.Datastore)
	case URIBlob, URIADLS:
		if d.Type != DatastoreAzureBlob && d.Type != DatastoreADLSGen2 || strings.Contains(d.Endpoint, "://") {
			return false
		}
		ep := d.Endpoint
		if ep == "" {
			ep = DefaultBlobEndpoint
		}
		return strings.EqualFold(d.AccountName, u.Account) && d.Container() == u.Container && strings.EqualFold(ep, u.EndpointSuffix)
	case URIS3:
		return d.Type == DatastoreS3 && d.Bucket == u.Bucket
	case URIHTTP:
		var base string
		switch d.Type {
		case DatastoreAzureBlob, DatastoreADLSGen2:
			if !strings.Contains(d.Endpoint, "://") {
				return false
			}
			base = d.BlobServiceURL() + "/" + d.Container() + "/"
		case DatastoreS3:
			if d.EndpointURL == "" {
				return false
			}
			base = d.EndpointURL + "/" + d.Bucket + "/"
		default:
			return false
		}
		return urlHasPrefix(u.URL, base)
	}
	return false
}

// urlHasPrefix compares scheme and host without case, the path exactly.
func urlHasPrefix(raw, base string) bool {
	a, err1 := url.Parse(raw)
	b, err2 := url.Parse(base)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host) && strings.HasPrefix(a.Path, b.Path)
}

// CheckDataURI parses s with ParseDataURI for a field other than "path"
// (a job's inputs.X.path, an asset's path): the error names that field.
func CheckDataURI(field, s string) (DataURI, error) {
	u, err := ParseDataURI(s)
	var e *core.Error
	if err != nil && errors.As(err, &e) && e.Field == "path" && field != "path" {
		e2 := *e
		e2.Field = field
		e2.Message = field + strings.TrimPrefix(e.Message, "path")
		return u, &e2
	}
	return u, err
}
