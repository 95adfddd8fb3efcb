package asset

import (
	"bytes"
	"encoding/json"
	"net"
	"net/netip"
	"net/url"
	"path"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
)

// datastoreKeys are the keys a datastore document may have: Azure's YAML
// keys (credentials apart), with the read-only keys of show output taken
// and ignored, so that `shoal datastore show -o yaml` reads back.
var datastoreKeys = map[string]bool{
	"$schema": false, "name": true, "type": true, "description": true, "tags": true,
	"account_name": true, "container_name": true, "endpoint": true, "protocol": true,
	"filesystem": true, "bucket": true, "endpoint_url": true, "region": true, "path": true,
	"credentials": true,
	// read-only keys of show output
	"id": false, "is_default": false, "credentials_type": false, "created_on": false, "created_by": false, "creation_context": false,
}

// credentialKeys are the keys of a datastore's credentials mapping.
var credentialKeys = []string{"account_key", "sas_token", "tenant_id", "client_id", "client_secret", "authority_url", "resource_url", "access_key_id", "secret_access_key"}

// MaxSecretBytes bounds each credential value.
const MaxSecretBytes = 8192

// DecodeDatastore decodes a datastore document (JSON with the YAML's
// snake_case keys; the CLI converts YAML to JSON) and validates it.
// Unknown keys and values of the wrong shape are EINVALID errors naming
// the key; the error never quotes a credential's value.
func DecodeDatastore(data []byte) (*DatastoreSpec, error) {
	data = bytes.TrimSpace(data)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, core.Errorf(core.EINVALID, "the datastore document must be a mapping of keys to values (name, type, account_name, container_name, credentials, ...)")
	}
	spec := &DatastoreSpec{}
	d := &spec.Datastore
	for _, k := range core.SortedKeys(obj) {
		take, known := datastoreKeys[k]
		if !known {
			return nil, core.FieldErrorf(k, "is not a key of a datastore (keys: name, type, description, tags, account_name, container_name, endpoint, protocol, filesystem, bucket, endpoint_url, region, path, credentials)")
		}
		if !take {
			continue
		}
		raw := obj[k]
		var err error
		switch k {
		case "tags":
			d.Tags, err = core.DecodeTags(raw)
			if err != nil {
				return nil, err
			}
		case "credentials":
			if spec.Credentials, err = decodeCredentials(raw); err != nil {
				return nil, err
			}
		default:
			var s string
			if string(raw) != "null" {
				if err := json.Unmarshal(raw, &s); err != nil {
					return nil, core.FieldErrorf(k, "must be a string")
				}
			}
			switch k {
			case "name":
				d.Name = s
			case "type":
				d.Type = DatastoreType(s)
			case "description":
				d.Description = s
			case "account_name":
				d.AccountName = s
			case "container_name":
				d.ContainerName = s
			case "endpoint":
				d.Endpoint = s
			case "protocol":
				d.Protocol = s
			case "filesystem":
				d.Filesystem = s
			case "bucket":
				d.Bucket = s
			case "endpoint_url":
				d.EndpointURL = s
			case "region":
				d.Region = s
			case "path":
				d.Path = s
			}
		}
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return spec, nil
}

// decodeCredentials decodes the credentials mapping: unknown keys are
// refused by name, values must be strings; no value is ever quoted.
func decodeCredentials(raw json.RawMessage) (Credentials, error) {
	var c Credentials
	if string(raw) == "null" {
		return c, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return c, core.FieldErrorf("credentials", "must be a mapping: account_key, sas_token, tenant_id/client_id/client_secret, or access_key_id/secret_access_key")
	}
	for _, k := range core.SortedKeys(obj) {
		known := false
		for _, ck := range credentialKeys {
			known = known || ck == k
		}
		if !known {
			return c, core.FieldErrorf("credentials."+k, "is not a key of datastore credentials (keys: %s)", strings.Join(credentialKeys, ", "))
		}
		var s string
		if err := json.Unmarshal(obj[k], &s); err != nil {
			return c, core.FieldErrorf("credentials."+k, "must be a string")
		}
		switch k {
		case "account_key":
			c.AccountKey = s
		case "sas_token":
			c.SASToken = s
		case "tenant_id":
			c.TenantID = s
		case "client_id":
			c.ClientID = s
		case "client_secret":
			c.ClientSecret = s
		case "authority_url":
			c.AuthorityURL = s
		case "resource_url":
			c.ResourceURL = s
		case "access_key_id":
			c.AccessKeyID = s
		case "secret_access_key":
			c.SecretAccessKey = s
		}
	}
	return c, nil
}

var (
	// Azure's rules: a storage account is 3 to 24 lower-case letters and
	// digits; a container (a filesystem) 3 to 63 lower-case letters,
	// digits and single hyphens, starting and ending with a letter or
	// digit.
	accountNameRE   = core.LazyRegexp(`^[a-z0-9]{3,24}$`)
	containerNameRE = core.LazyRegexp(`^[a-z0-9](?:[a-z0-9]|-[a-z0-9]){2,62}$`)
	// S3's rule for bucket names.
	bucketNameRE = core.LazyRegexp(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	regionRE     = core.LazyRegexp(`^[a-z0-9][a-z0-9-]{0,63}$`)
	// A DNS suffix such as core.windows.net.
	dnsSuffixRE = core.LazyRegexp(`^(?i)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)
)

// Validate checks the datastore and its credentials, fills Azure's
// defaults (endpoint, protocol, region) and sets CredentialsType. Errors
// name the field and the rule and never quote a secret.
func (s *DatastoreSpec) Validate() error {
	d, c := &s.Datastore, &s.Credentials
	d.Name = strings.TrimSpace(d.Name)
	if err := ValidateDatastoreName(d.Name); err != nil {
		return err
	}
	if IsBuiltinDatastore(d.Name) {
		return core.FieldErrorf("name", "%q is a built-in datastore (Shoal's own file store), present in every workspace: it cannot be created or replaced; choose another name", d.Name)
	}
	if err := checkText("description", d.Description, 4096); err != nil {
		return err
	}
	for _, f := range []struct {
		field string
		v     string
	}{{"credentials.account_key", c.AccountKey}, {"credentials.sas_token", c.SASToken}, {"credentials.tenant_id", c.TenantID},
		{"credentials.client_id", c.ClientID}, {"credentials.client_secret", c.ClientSecret}, {"credentials.authority_url", c.AuthorityURL},
		{"credentials.resource_url", c.ResourceURL}, {"credentials.access_key_id", c.AccessKeyID}, {"credentials.secret_access_key", c.SecretAccessKey}} {
		if err := checkText(f.field, f.v, MaxSecretBytes); err != nil {
			return err
		}
	}
	// Only the fields of the datastore's type: a field of another type
	// is a mistake the user should hear of, not a value silently kept.
	own := map[DatastoreType][]string{
		DatastoreAzureBlob: {"account_name", "container_name", "endpoint", "protocol"},
		DatastoreADLSGen2:  {"account_name", "filesystem", "endpoint", "protocol"},
		DatastoreS3:        {"bucket", "endpoint_url", "region"},
		DatastoreNFS:       {"path"},
	}
	fields, ok := own[d.Type]
	if !ok {
		if d.Type == "" {
			return core.FieldErrorf("type", "is required: azure_blob, azure_data_lake_gen2, s3 or nfs")
		}
		return core.FieldErrorf("type", "%q is not a datastore type: azure_blob, azure_data_lake_gen2, s3 or nfs", core.Short(string(d.Type)))
	}
	for _, f := range []struct {
		field string
		v     string
	}{{"account_name", d.AccountName}, {"container_name", d.ContainerName}, {"endpoint", d.Endpoint}, {"protocol", d.Protocol},
		{"filesystem", d.Filesystem}, {"bucket", d.Bucket}, {"endpoint_url", d.EndpointURL}, {"region", d.Region}, {"path", d.Path}} {
		mine := false
		for _, o := range fields {
			mine = mine || o == f.field
		}
		if f.v != "" && !mine {
			return core.FieldErrorf(f.field, "is not a field of a %s datastore (its fields: %s)", d.Type, strings.Join(fields, ", "))
		}
	}
	var err error
	switch d.Type {
	case DatastoreAzureBlob, DatastoreADLSGen2:
		err = validateAzureDatastore(d, c)
	case DatastoreS3:
		err = validateS3Datastore(d, c)
	case DatastoreNFS:
		err = validateNFSDatastore(d, c)
	}
	if err != nil {
		return err
	}
	d.CredentialsType = c.Type()
	return nil
}

func validateAzureDatastore(d *Datastore, c *Credentials) error {
	if d.AccountName == "" {
		return core.FieldErrorf("account_name", "is required: the storage account's name")
	}
	if !accountNameRE.MatchString(d.AccountName) {
		return core.FieldErrorf("account_name", "%q must be 3 to 24 lower-case letters and digits, as Azure names storage accounts", core.Short(d.AccountName))
	}
	field, container := "container_name", d.ContainerName
	if d.Type == DatastoreADLSGen2 {
		field, container = "filesystem", d.Filesystem
	}
	if container == "" {
		return core.FieldErrorf(field, "is required")
	}
	if !containerNameRE.MatchString(container) {
		return core.FieldErrorf(field, "%q must be 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit, as Azure names containers", core.Short(container))
	}
	switch d.Protocol {
	case "":
		d.Protocol = DefaultProtocol
	case "https", "wasbs", "http":
	default:
		return core.FieldErrorf("protocol", "%q must be https, wasbs or http", core.Short(d.Protocol))
	}
	if d.Endpoint == "" {
		d.Endpoint = DefaultBlobEndpoint
	}
	if strings.Contains(d.Endpoint, "://") {
		if err := ValidateEndpointURL("endpoint", d.Endpoint, true); err != nil {
			return err
		}
	} else {
		if len(d.Endpoint) > 253 || !dnsSuffixRE.MatchString(d.Endpoint) {
			return core.FieldErrorf("endpoint", "%q must be a DNS suffix (core.windows.net) or the Blob service's URL with the account (http://10.1.2.3:10000/devstoreaccount1)", core.Short(d.Endpoint))
		}
		if err := CheckEndpointHost("endpoint", strings.ToLower(d.AccountName)+".blob."+d.Endpoint); err != nil {
			return err
		}
	}
	ct := c.Type()
	allowed := []CredentialsType{CredentialsNone, CredentialsAccountKey, CredentialsSAS}
	if d.Type == DatastoreADLSGen2 {
		allowed = append(allowed, CredentialsServicePrincipal)
	}
	if err := credentialsAllowed(d.Type, ct, allowed); err != nil {
		return err
	}
	if err := onlyOneCredential(c, ct); err != nil {
		return err
	}
	if ct == CredentialsServicePrincipal {
		for _, f := range []struct{ field, v string }{{"credentials.tenant_id", c.TenantID}, {"credentials.client_id", c.ClientID}, {"credentials.client_secret", c.ClientSecret}} {
			if f.v == "" {
				return core.FieldErrorf(f.field, "is required with a service principal (tenant_id, client_id and client_secret)")
			}
		}
	}
	if ct == CredentialsSAS {
		c.SASToken = strings.TrimPrefix(c.SASToken, "?")
	}
	return nil
}

func validateS3Datastore(d *Datastore, c *Credentials) error {
	if d.Bucket == "" {
		return core.FieldErrorf("bucket", "is required: the bucket's name")
	}
	if !bucketNameRE.MatchString(d.Bucket) || strings.Contains(d.Bucket, "..") {
		return core.FieldErrorf("bucket", "%q must be 3 to 63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit, as S3 names buckets", core.Short(d.Bucket))
	}
	if d.Region == "" {
		d.Region = DefaultS3Region
	}
	if !regionRE.MatchString(d.Region) {
		return core.FieldErrorf("region", "%q must be lower-case letters, digits and '-' (us-east-1)", core.Short(d.Region))
	}
	if d.EndpointURL != "" {
		if err := ValidateEndpointURL("endpoint_url", d.EndpointURL, false); err != nil {
			return err
		}
		d.EndpointURL = strings.TrimSuffix(d.EndpointURL, "/")
	}
	ct := c.Type()
	if err := credentialsAllowed(d.Type, ct, []CredentialsType{CredentialsNone, CredentialsAccessKey}); err != nil {
		return err
	}
	if err := onlyOneCredential(c, ct); err != nil {
		return err
	}
	if ct == CredentialsAccessKey {
		if c.AccessKeyID == "" {
			return core.FieldErrorf("credentials.access_key_id", "is required with secret_access_key")
		}
		if c.SecretAccessKey == "" {
			return core.FieldErrorf("credentials.secret_access_key", "is required with access_key_id")
		}
	}
	return nil
}

func validateNFSDatastore(d *Datastore, c *Credentials) error {
	if d.Path == "" {
		return core.FieldErrorf("path", "is required: where the file system is mounted on every node (/mnt/datasets)")
	}
	if err := checkText("path", d.Path, 4096); err != nil {
		return err
	}
	if !strings.HasPrefix(d.Path, "/") || strings.Contains(d.Path, `\`) || path.Clean(d.Path) != strings.TrimSuffix(d.Path, "/") && d.Path != "/" {
		return core.FieldErrorf("path", "%q must be an absolute, clean path without '..' segments (/mnt/datasets)", core.Short(d.Path))
	}
	for _, seg := range strings.Split(d.Path, "/") {
		if seg == ".." || seg == "." {
			return core.FieldErrorf("path", "%q must be an absolute, clean path without '..' segments (/mnt/datasets)", core.Short(d.Path))
		}
	}
	if path.Clean(d.Path) == "/" {
		return core.FieldErrorf("path", "must not be / : name the folder the file system is mounted on (/mnt/datasets)")
	}
	d.Path = path.Clean(d.Path)
	if !c.IsZero() {
		return core.FieldErrorf("credentials", "an nfs datastore takes no credentials: the nodes' mount decides who may read it")
	}
	return nil
}

// credentialsAllowed refuses a credential type the datastore type does
// not take.
func credentialsAllowed(t DatastoreType, ct CredentialsType, allowed []CredentialsType) error {
	for _, a := range allowed {
		if a == ct {
			return nil
		}
	}
	names := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if a != CredentialsNone {
			names = append(names, string(a))
		}
	}
	return core.FieldErrorf("credentials", "a %s datastore takes %s credentials (or none), not %s", t, strings.Join(names, ", "), ct)
}

// onlyOneCredential refuses a mapping that mixes kinds of credential.
func onlyOneCredential(c *Credentials, ct CredentialsType) error {
	kinds := 0
	for _, set := range []bool{c.AccountKey != "", c.SASToken != "", c.TenantID != "" || c.ClientID != "" || c.ClientSecret != "", c.AccessKeyID != "" || c.SecretAccessKey != ""} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return core.FieldErrorf("credentials", "holds more than one kind of credential: give exactly one of account_key, sas_token, a service principal (tenant_id, client_id, client_secret) or an access key (access_key_id, secret_access_key)")
	}
	if ct != CredentialsServicePrincipal && (c.AuthorityURL != "" || c.ResourceURL != "") {
		return core.FieldErrorf("credentials", "authority_url and resource_url go only with a service principal")
	}
	return nil
}

// ValidateEndpointURL checks a storage endpoint given as a URL: http or
// https, a host, no user info, query or fragment, and a host the
// endpoint rule allows (CheckEndpointHost). withPath allows a path (the
// account of a path-style Blob service, Azurite's /devstoreaccount1).
func ValidateEndpointURL(field, raw string, withPath bool) error {
	if err := checkText(field, raw, 2048); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return core.FieldErrorf(field, "%q must be an http:// or https:// URL with a host", core.Short(raw))
	}
	if u.User != nil {
		return core.FieldErrorf(field, "must not hold user info: credentials go in the credentials mapping, which is kept sealed")
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.Contains(raw, "?") || strings.Contains(raw, "#") {
		return core.FieldErrorf(field, "%q must not have a query or a fragment", core.Short(raw))
	}
	if p := strings.TrimSuffix(u.Path, "/"); p != "" && !withPath {
		return core.FieldErrorf(field, "%q must not have a path: the bucket is its own field", core.Short(raw))
	}
	if strings.Contains(u.Path, "..") || strings.Contains(u.Path, `\`) {
		return core.FieldErrorf(field, "%q must not have '..' or '\\' in its path", core.Short(raw))
	}
	return CheckEndpointHost(field, u.Hostname())
}

// CheckEndpointHost is the endpoint rule against hostile input: a host
// that is a loopback, link-local (169.254.0.0/16, the cloud metadata
// address; fe80::/10), unspecified or multicast address, or a name the
// server itself or the metadata service answers to (localhost,
// *.localhost, metadata, metadata.google.internal), is refused. A name
// is checked again on its resolved address when the data is fetched
// (DNS rebinding): this is the first of two checks.
func CheckEndpointHost(field, host string) error {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "" {
		return core.FieldErrorf(field, "must name a host")
	}
	if addr, err := netip.ParseAddr(h); err == nil {
		return checkEndpointAddr(field, addr)
	}
	// Forms net.ParseIP and some resolvers take that netip does not
	// (IPv4 in decimal, octal or hex words: 2130706433, 0x7f.1).
	if ip := net.ParseIP(h); ip != nil {
		if addr, ok := netip.AddrFromSlice(ip); ok {
			return checkEndpointAddr(field, addr)
		}
	}
	if looksNumericHost(h) {
		return core.FieldErrorf(field, "%q is a numeric host in a form other than dotted decimal: write the address as a.b.c.d", core.Short(host))
	}
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return core.FieldErrorf(field, "%q is the loopback: a datastore must not reach the server's own machine", core.Short(host))
	case h == "metadata" || h == "metadata.google.internal" || strings.HasPrefix(h, "metadata."):
		return core.FieldErrorf(field, "%q is the cloud metadata service: a datastore must not reach it", core.Short(host))
	}
	return nil
}

// looksNumericHost reports a host of only digits, dots and hex words
// that is not a dotted-decimal address: resolvers may read it as an IP.
func looksNumericHost(h string) bool {
	last := h
	if i := strings.LastIndex(h, "."); i >= 0 {
		last = h[i+1:]
	}
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func checkEndpointAddr(field string, a netip.Addr) error {
	a = a.Unmap()
	var what string
	switch {
	case a.IsLoopback():
		what = "the loopback"
	case a.IsLinkLocalUnicast():
		what = "a link-local address (169.254.169.254 is the cloud metadata service)"
	case a.IsUnspecified():
		what = "the unspecified address"
	case a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		what = "a multicast address"
	case a.Is4() && a.As4() == [4]byte{255, 255, 255, 255}:
		what = "the broadcast address"
	default:
		return nil
	}
	return core.FieldErrorf(field, "%s is %s: a datastore must not reach the server's machine or the metadata service", a, what)
}
