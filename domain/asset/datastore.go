package asset

import (
	"log/slog"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// DatastoreType is the kind of storage a datastore points at: Azure's
// types by their YAML names, and two of Shoal's for what a team's own
// machines have.
type DatastoreType string

// The datastore types.
const (
	// DatastoreAzureBlob is an Azure Blob Storage container (or
	// Azurite's, or Azure Stack's).
	DatastoreAzureBlob DatastoreType = "azure_blob"
	// DatastoreADLSGen2 is an Azure Data Lake Storage Gen2 filesystem.
	DatastoreADLSGen2 DatastoreType = "azure_data_lake_gen2"
	// DatastoreS3 is Shoal's: a bucket of an S3-compatible server
	// (MinIO, Ceph's RGW, versitygw) or of AWS.
	DatastoreS3 DatastoreType = "s3"
	// DatastoreNFS is Shoal's: a path mounted at the same place on
	// every node (NFS, a shared file system).
	DatastoreNFS DatastoreType = "nfs"
)

// CredentialsType says which kind of secret a datastore keeps; it is
// shown, the secret never is.
type CredentialsType string

// The credential types, as Shoal shows them (snake_case like the YAML);
// ARM shows them as Azure's AccountKey, Sas, ServicePrincipal, None.
const (
	CredentialsNone             CredentialsType = "none"
	CredentialsAccountKey       CredentialsType = "account_key"
	CredentialsSAS              CredentialsType = "sas"
	CredentialsServicePrincipal CredentialsType = "service_principal"
	CredentialsAccessKey        CredentialsType = "access_key"
)

// The built-in datastores every workspace has without creating them:
// Shoal's own file store, shown as Azure shows a workspace's default
// storage account. They cannot be created, replaced or deleted.
const (
	WorkspaceBlobStore     = "workspaceblobstore"
	WorkspaceArtifactStore = "workspaceartifactstore"
	// BuiltinAccountName is the account the built-ins show.
	BuiltinAccountName = "shoal"
)

// Default values of a datastore's fields, as Azure's.
const (
	DefaultBlobEndpoint = "core.windows.net"
	DefaultProtocol     = "https"
	DefaultS3Region     = "us-east-1"
)

// Datastore is a workspace's named connection to storage (`az ml datastore
// create`), keyed by workspace and name and not versioned: creating one
// of an existing name replaces it. JSON names are Azure's YAML names.
// The secret is kept sealed by the server's secrets key in
// SealedCredentials, which no JSON carries: a list, show, event or log
// line of a Datastore never holds it.
type Datastore struct {
	Workspace   string            `json:"-"`
	Name        string            `json:"name"`
	Type        DatastoreType     `json:"type"`
	Description string            `json:"description,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
	// AccountName, ContainerName, Endpoint and Protocol: azure_blob
	// (AccountName, Endpoint, Protocol also azure_data_lake_gen2).
	AccountName   string `json:"account_name,omitempty"`
	ContainerName string `json:"container_name,omitempty"`
	// Endpoint is the storage DNS suffix (core.windows.net), or, when it
	// holds "://", the full Blob service URL with the account, as
	// Azurite serves it (http://10.1.2.3:10000/devstoreaccount1).
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is https (default), wasbs (https) or http.
	Protocol string `json:"protocol,omitempty"`
	// Filesystem is an azure_data_lake_gen2's filesystem (its container).
	Filesystem string `json:"filesystem,omitempty"`
	// Bucket, EndpointURL and Region: s3. EndpointURL empty is AWS.
	Bucket      string `json:"bucket,omitempty"`
	EndpointURL string `json:"endpoint_url,omitempty"`
	Region      string `json:"region,omitempty"`
	// Path is an nfs datastore's mount point on every node.
	Path string `json:"path,omitempty"`
	// IsDefault: the workspace's default datastore (workspaceblobstore).
	IsDefault bool `json:"is_default"`
	// CredentialsType says which secret is kept, never the secret.
	CredentialsType CredentialsType `json:"credentials_type"`
	CreatedOn       time.Time       `json:"created_on"`
	CreatedBy       string          `json:"created_by,omitempty"`
	// SealedCredentials is the Credentials' JSON sealed by the server's
	// secrets key (internal/sealing, context DatastoreSealContext); empty
	// for none.
	SealedCredentials string `json:"-"`
}

// Credentials is a datastore's secret as the YAML's credentials mapping
// writes it: one of an account key, a SAS token, a service principal or
// an S3 access key. Its String and GoString hide every secret, so that a
// value printed by mistake leaks nothing.
type Credentials struct {
	AccountKey string `json:"account_key,omitempty"`
	SASToken   string `json:"sas_token,omitempty"`
	// Service principal (azure_data_lake_gen2): TenantID and ClientID
	// are not secret; ClientSecret is.
	TenantID     string `json:"tenant_id,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthorityURL string `json:"authority_url,omitempty"`
	ResourceURL  string `json:"resource_url,omitempty"`
	// S3 access key: AccessKeyID is not secret; SecretAccessKey is.
	AccessKeyID     string `json:"access_key_id,omitempty"`
	SecretAccessKey string `json:"secret_access_key,omitempty"`
}

// Type returns which kind of credential c holds; none when empty.
// Validate has refused a mix.
func (c Credentials) Type() CredentialsType {
	switch {
	case c.AccountKey != "":
		return CredentialsAccountKey
	case c.SASToken != "":
		return CredentialsSAS
	case c.ClientSecret != "" || c.ClientID != "" || c.TenantID != "":
		return CredentialsServicePrincipal
	case c.AccessKeyID != "" || c.SecretAccessKey != "":
		return CredentialsAccessKey
	}
	return CredentialsNone
}

// String names the kind of credential and its public parts only.
func (c Credentials) String() string {
	switch t := c.Type(); t {
	case CredentialsServicePrincipal:
		return "credentials service_principal (tenant " + c.TenantID + ", client " + c.ClientID + ")"
	case CredentialsAccessKey:
		return "credentials access_key (" + c.AccessKeyID + ")"
	default:
		return "credentials " + string(t)
	}
}

// GoString hides the secrets from %#v as well.
func (c Credentials) GoString() string { return c.String() }

// LogValue hides the secrets from log/slog, whose JSON handler would
// otherwise marshal the fields.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// IsZero reports whether c holds no credential.
func (c Credentials) IsZero() bool { return c == Credentials{} }

// DatastoreSealContext is the context a datastore's credentials are
// sealed under: a sealed value copied to another workspace's or
// datastore's row does not open.
func DatastoreSealContext(workspace, name string) string {
	return "datastore/" + strings.ToLower(workspace) + "/" + strings.ToLower(name)
}

// IsBuiltinDatastore reports whether name is one of the built-in
// datastores (compared as the store compares names, without case).
func IsBuiltinDatastore(name string) bool {
	return strings.EqualFold(name, WorkspaceBlobStore) || strings.EqualFold(name, WorkspaceArtifactStore)
}

// BuiltinDatastores returns the datastores every workspace has: Shoal's
// own file store under Azure's names, workspaceblobstore the default.
// Created is when the workspace was created.
func BuiltinDatastores(workspace string, created time.Time) []*Datastore {
	mk := func(name string, isDefault bool, desc string) *Datastore {
		return &Datastore{
			Workspace: workspace, Name: name, Type: DatastoreAzureBlob, Description: desc,
			AccountName: BuiltinAccountName, ContainerName: name, Endpoint: DefaultBlobEndpoint, Protocol: DefaultProtocol,
			IsDefault: isDefault, CredentialsType: CredentialsNone, CreatedOn: created, CreatedBy: "shoal",
		}
	}
	return []*Datastore{
		mk(WorkspaceArtifactStore, false, "Shoal's own file store: job artifacts"),
		mk(WorkspaceBlobStore, true, "Shoal's own file store: the workspace's default datastore"),
	}
}

// BlobServiceURL is the Blob service URL of an azure_blob or
// azure_data_lake_gen2 datastore, with no trailing slash: the endpoint
// itself when it is a URL (Azurite, path-style), else
// <protocol>://<account>.blob.<endpoint> (wasbs is https). "" for the
// other types.
func (d *Datastore) BlobServiceURL() string {
	if d.Type != DatastoreAzureBlob && d.Type != DatastoreADLSGen2 {
		return ""
	}
	if strings.Contains(d.Endpoint, "://") {
		return strings.TrimSuffix(d.Endpoint, "/")
	}
	scheme := "https"
	if d.Protocol == "http" {
		scheme = "http"
	}
	ep := d.Endpoint
	if ep == "" {
		ep = DefaultBlobEndpoint
	}
	return scheme + "://" + strings.ToLower(d.AccountName) + ".blob." + ep
}

// Container is where a datastore's paths live: an azure_blob's
// container, an azure_data_lake_gen2's filesystem, an s3's bucket.
func (d *Datastore) Container() string {
	switch d.Type {
	case DatastoreADLSGen2:
		return d.Filesystem
	case DatastoreS3:
		return d.Bucket
	}
	return d.ContainerName
}

// DatastoreSpec is a datastore as a user writes it (`shoal datastore
// create -f`, PUT): the datastore and its credentials in clear, which the
// service seals before anything is stored. String hides the secrets.
type DatastoreSpec struct {
	Datastore   Datastore
	Credentials Credentials
}

// String hides the credentials.
func (s DatastoreSpec) String() string {
	return "datastore " + s.Datastore.Name + " (" + string(s.Datastore.Type) + ", " + s.Credentials.String() + ")"
}

// GoString hides the credentials from %#v as well.
func (s DatastoreSpec) GoString() string { return s.String() }

// LogValue hides the credentials from log/slog.
func (s DatastoreSpec) LogValue() slog.Value { return slog.StringValue(s.String()) }

// checkText refuses control characters and over-long values.
func checkText(field, v string, max int) error {
	if len(v) > max {
		return core.FieldErrorf(field, "must be at most %d bytes", max)
	}
	if strings.ContainsFunc(v, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		return core.FieldErrorf(field, "must not contain control characters")
	}
	return nil
}

// ValidateDatastoreName checks a datastore's name: the rule of
// environments' names (1 to 255 letters, digits, '-', '_', '.').
func ValidateDatastoreName(name string) error {
	if name == "" {
		return core.FieldErrorf("name", "is required")
	}
	if len(name) > MaxEnvironmentNameLength || !EnvironmentNameRE.MatchString(name) {
		return core.FieldErrorf("name", "%q must be 1 to %d letters, digits, '-', '_' and '.', starting with a letter or digit", core.Short(name), MaxEnvironmentNameLength)
	}
	return nil
}
