package arm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// DatastoreType is the resource type of a datastore, as Azure names it.
const DatastoreType = "Microsoft.MachineLearningServices/workspaces/datastores"

// DatastoreResource is Azure's DatastoreResource: a datastore with its
// credentials' kind and public parts, never their secrets (Azure answers
// those only to POST …/listSecrets).
type DatastoreResource struct {
	ID         string               `json:"id,omitempty"`
	Name       string               `json:"name,omitempty"`
	Type       string               `json:"type,omitempty"`
	SystemData *armcore.SystemData  `json:"systemData,omitempty"`
	Properties *DatastoreProperties `json:"properties"`
}

// DatastoreProperties are a DatastoreResource's properties: Azure's
// AzureBlobDatastore and AzureDataLakeGen2Datastore fields, and Shoal's
// S3 (bucket, endpointUrl, region) and Nfs (path) datastores.
type DatastoreProperties struct {
	DatastoreType string               `json:"datastoreType"`
	Description   string               `json:"description,omitempty"`
	Tags          map[string]string    `json:"tags"`
	Properties    map[string]string    `json:"properties"`
	Credentials   DatastoreCredentials `json:"credentials"`
	IsDefault     bool                 `json:"isDefault"`
	AccountName   string               `json:"accountName,omitempty"`
	ContainerName string               `json:"containerName,omitempty"`
	Filesystem    string               `json:"filesystem,omitempty"`
	Endpoint      string               `json:"endpoint,omitempty"`
	Protocol      string               `json:"protocol,omitempty"`
	Bucket        string               `json:"bucket,omitempty"`
	EndpointURL   string               `json:"endpointUrl,omitempty"`
	Region        string               `json:"region,omitempty"`
	Path          string               `json:"path,omitempty"`
	// ServiceDataAccessAuthIdentity is None: Shoal reaches storage with
	// the datastore's credentials only.
	ServiceDataAccessAuthIdentity string `json:"serviceDataAccessAuthIdentity,omitempty"`
	// SubscriptionID and ResourceGroup are Azure's storage account's;
	// accepted and ignored.
	SubscriptionID string `json:"subscriptionId,omitempty"`
	ResourceGroup  string `json:"resourceGroup,omitempty"`
}

// DatastoreCredentials are Azure's DatastoreCredentials: credentialsType
// and a service principal's public parts; Secrets only in a PUT's body,
// never in an answer.
type DatastoreCredentials struct {
	CredentialsType string            `json:"credentialsType"`
	TenantID        string            `json:"tenantId,omitempty"`
	ClientID        string            `json:"clientId,omitempty"`
	AuthorityURL    string            `json:"authorityUrl,omitempty"`
	ResourceURL     string            `json:"resourceUrl,omitempty"`
	AccessKeyID     string            `json:"accessKeyId,omitempty"`
	Secrets         *DatastoreSecrets `json:"secrets,omitempty"`
}

// DatastoreSecrets are Azure's DatastoreSecrets: what listSecrets answers
// and a PUT brings, by secretsType.
type DatastoreSecrets struct {
	SecretsType     string `json:"secretsType"`
	Key             string `json:"key,omitempty"`
	SASToken        string `json:"sasToken,omitempty"`
	ClientSecret    string `json:"clientSecret,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"`
}

// The names of the types in Azure's wire format; S3 and Nfs are Shoal's.
var (
	armDatastoreTypes = map[asset.DatastoreType]string{
		asset.DatastoreAzureBlob: "AzureBlob", asset.DatastoreADLSGen2: "AzureDataLakeGen2",
		asset.DatastoreS3: "S3", asset.DatastoreNFS: "Nfs",
	}
	armCredentialTypes = map[asset.CredentialsType]string{
		asset.CredentialsNone: "None", asset.CredentialsAccountKey: "AccountKey", asset.CredentialsSAS: "Sas",
		asset.CredentialsServicePrincipal: "ServicePrincipal", asset.CredentialsAccessKey: "AccessKey",
	}
)

// ToDatastoreResource shows a datastore as Azure's DatastoreResource,
// with the public parts of its credentials (pub) and no secret.
func ToDatastoreResource(scope Scope, d *asset.Datastore, pub asset.Credentials) *DatastoreResource {
	ct := armCredentialTypes[d.CredentialsType]
	if ct == "" {
		ct = "None"
	}
	tags := d.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	return &DatastoreResource{
		ID: scope.WorkspaceID(d.Workspace) + "/datastores/" + d.Name, Name: d.Name, Type: DatastoreType,
		SystemData: &armcore.SystemData{CreatedAt: d.CreatedOn.UTC(), CreatedBy: d.CreatedBy},
		Properties: &DatastoreProperties{
			DatastoreType: armDatastoreTypes[d.Type], Description: d.Description, Tags: tags, Properties: map[string]string{},
			Credentials: DatastoreCredentials{CredentialsType: ct, TenantID: pub.TenantID, ClientID: pub.ClientID,
				AuthorityURL: pub.AuthorityURL, ResourceURL: pub.ResourceURL, AccessKeyID: pub.AccessKeyID},
			IsDefault: d.IsDefault, AccountName: d.AccountName, ContainerName: d.ContainerName, Filesystem: d.Filesystem,
			Endpoint: d.Endpoint, Protocol: d.Protocol, Bucket: d.Bucket, EndpointURL: d.EndpointURL, Region: d.Region, Path: d.Path,
			ServiceDataAccessAuthIdentity: "None",
		},
	}
}

// publicParts keeps what of a credential may be shown: a service
// principal's tenant and client, an access key's ID.
func publicParts(c asset.Credentials) asset.Credentials {
	return asset.Credentials{TenantID: c.TenantID, ClientID: c.ClientID, AuthorityURL: c.AuthorityURL, ResourceURL: c.ResourceURL, AccessKeyID: c.AccessKeyID}
}

// datastoreFields map Shoal's field names to a DatastoreResource's, so
// that an error names what the caller sent.
var datastoreFields = map[string]string{
	"name": "name", "type": "properties.datastoreType", "description": "properties.description", "tags": "properties.tags",
	"account_name": "properties.accountName", "container_name": "properties.containerName", "filesystem": "properties.filesystem",
	"endpoint": "properties.endpoint", "protocol": "properties.protocol", "bucket": "properties.bucket",
	"endpoint_url": "properties.endpointUrl", "region": "properties.region", "path": "properties.path",
	"credentials": "properties.credentials", "credentials.account_key": "properties.credentials.secrets.key",
	"credentials.sas_token": "properties.credentials.secrets.sasToken", "credentials.client_secret": "properties.credentials.secrets.clientSecret",
	"credentials.tenant_id": "properties.credentials.tenantId", "credentials.client_id": "properties.credentials.clientId",
	"credentials.authority_url": "properties.credentials.authorityUrl", "credentials.resource_url": "properties.credentials.resourceUrl",
	"credentials.access_key_id": "properties.credentials.accessKeyId", "credentials.secret_access_key": "properties.credentials.secrets.secretAccessKey",
}

// armDatastoreError renames an EINVALID error's field to its name in a
// DatastoreResource.
func armDatastoreError(err error) error {
	f := core.ErrorField(err)
	to, ok := datastoreFields[f]
	if !ok || core.ErrorCode(err) != core.EINVALID {
		return err
	}
	msg := core.ErrorMessage(err)
	return &core.Error{Code: core.EINVALID, Field: to, Message: to + strings.TrimPrefix(msg, f)}
}

// FromDatastoreResource reads a DatastoreResource's PUT body (the name
// from the path) into what the datastores service creates. Unknown
// properties are refused by name; a credentialsType that disagrees with
// the secrets given is refused.
func FromDatastoreResource(name string, body []byte) (*asset.DatastoreSpec, error) {
	var res struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(body, &res); err != nil || len(res.Properties) == 0 || string(res.Properties) == "null" {
		return nil, core.FieldErrorf("properties", "is required: a DatastoreResource's body is {\"properties\": {\"datastoreType\": \"AzureBlob\", ...}}")
	}
	var p DatastoreProperties
	dec := json.NewDecoder(strings.NewReader(string(res.Properties)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		field := "properties"
		if _, after, ok := strings.Cut(err.Error(), `unknown field "`); ok {
			field = "properties." + strings.TrimSuffix(after, `"`)
			return nil, core.FieldErrorf(field, "is not a property of a datastore Shoal keeps")
		}
		return nil, core.FieldErrorf(field, "is not a DatastoreResource's properties (%s)", core.Short(strings.TrimPrefix(err.Error(), "json: ")))
	}
	var t asset.DatastoreType
	for k, v := range armDatastoreTypes {
		if strings.EqualFold(v, p.DatastoreType) {
			t = k
		}
	}
	if t == "" {
		return nil, core.FieldErrorf("properties.datastoreType", "%q is not AzureBlob, AzureDataLakeGen2, S3 or Nfs", core.Short(p.DatastoreType))
	}
	spec := &asset.DatastoreSpec{Datastore: asset.Datastore{
		Name: name, Type: t, Description: p.Description, Tags: p.Tags, AccountName: p.AccountName, ContainerName: p.ContainerName,
		Filesystem: p.Filesystem, Endpoint: p.Endpoint, Protocol: p.Protocol, Bucket: p.Bucket, EndpointURL: p.EndpointURL, Region: p.Region, Path: p.Path,
	}}
	if len(spec.Datastore.Tags) == 0 {
		spec.Datastore.Tags = nil
	}
	c := p.Credentials
	cred := asset.Credentials{TenantID: c.TenantID, ClientID: c.ClientID, AuthorityURL: c.AuthorityURL, ResourceURL: c.ResourceURL, AccessKeyID: c.AccessKeyID}
	if s := c.Secrets; s != nil {
		cred.AccountKey, cred.SASToken, cred.ClientSecret, cred.SecretAccessKey = s.Key, s.SASToken, s.ClientSecret, s.SecretAccessKey
		if s.SecretsType != "" && !strings.EqualFold(s.SecretsType, c.CredentialsType) {
			return nil, core.FieldErrorf("properties.credentials.secrets.secretsType", "%q differs from credentialsType %q", core.Short(s.SecretsType), core.Short(c.CredentialsType))
		}
	}
	spec.Credentials = cred
	if err := spec.Validate(); err != nil {
		return nil, armDatastoreError(err)
	}
	if want := armCredentialTypes[spec.Datastore.CredentialsType]; c.CredentialsType != "" && !strings.EqualFold(c.CredentialsType, want) {
		return nil, core.FieldErrorf("properties.credentials.credentialsType", "is %q but the secrets given are %s's (or none were given)", core.Short(c.CredentialsType), want)
	}
	return spec, nil
}

// ListDatastores is GET …/datastores: the workspace's datastores, the
// built-ins included, by name; isDefault=true keeps the default only.
// Pages of PageSize follow nextLink.
func (h Handlers) ListDatastores(w http.ResponseWriter, r *http.Request) {
	list, err := h.Datastores.List(r.Context(), r.PathValue("ws"))
	if err != nil {
		WriteError(w, err)
		return
	}
	switch v := strings.ToLower(r.URL.Query().Get("isDefault")); v {
	case "":
	case "true", "false":
		keep := list[:0]
		for _, d := range list {
			if d.IsDefault == (v == "true") {
				keep = append(keep, d)
			}
		}
		list = keep
	default:
		WriteError(w, core.FieldErrorf("isDefault", "%q is not true or false", core.Short(v)))
		return
	}
	keys := make([]string, len(list))
	for i, d := range list {
		keys[i] = strings.ToLower(d.Name)
	}
	lo, hi, next, err := pageKeys(h.Svc.PublicURL(), r, keys, PageSize, r.URL.Query())
	if err != nil {
		WriteError(w, err)
		return
	}
	out := make([]*DatastoreResource, 0, hi-lo)
	for _, d := range list[lo:hi] {
		// The public parts of a service principal are shown, as Azure
		// shows them; reading them opens the sealed credentials.
		pub := asset.Credentials{}
		if d.CredentialsType == asset.CredentialsServicePrincipal || d.CredentialsType == asset.CredentialsAccessKey {
			if _, sec, err := h.Datastores.Resolve(r.Context(), r.PathValue("ws"), d.Name); err == nil {
				pub = publicParts(sec)
			}
		}
		res := ToDatastoreResource(scopeOf(r), d, pub)
		h.showBlobStoreSAS(res)
		out = append(out, res)
	}
	writeList(w, out, next)
}

// GetDatastore is GET …/datastores/{name}.
func (h Handlers) GetDatastore(w http.ResponseWriter, r *http.Request) {
	d, sec, err := h.Datastores.Resolve(r.Context(), r.PathValue("ws"), r.PathValue("name"))
	if err != nil {
		// A datastore whose credentials cannot be opened is still shown.
		got, gerr := h.Datastores.Get(r.Context(), r.PathValue("ws"), r.PathValue("name"))
		if gerr != nil {
			WriteError(w, gerr)
			return
		}
		d, sec = *got, asset.Credentials{}
	}
	res := ToDatastoreResource(scopeOf(r), &d, publicParts(sec))
	h.showBlobStoreSAS(res)
	writeJSON(w, http.StatusOK, res)
}

// PutDatastore is PUT …/datastores/{name}: create (201) or replace (200),
// the secrets sealed and never answered.
func (h Handlers) PutDatastore(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		WriteError(w, err)
		return
	}
	spec, err := FromDatastoreResource(r.PathValue("name"), body)
	if err != nil {
		WriteError(w, err)
		return
	}
	d, created, err := h.Datastores.Create(r.Context(), r.PathValue("ws"), spec)
	if err != nil {
		WriteError(w, armDatastoreError(err))
		return
	}
	status := createdStatus(created)
	writeJSON(w, status, ToDatastoreResource(scopeOf(r), d, publicParts(spec.Credentials)))
}

// DeleteDatastore is DELETE …/datastores/{name}: 200, or 204 when there
// was none, as Azure answers a delete.
func (h Handlers) DeleteDatastore(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Svc.FindWorkspace(r.Context(), r.PathValue("ws")); err != nil {
		WriteError(w, err)
		return
	}
	deleted(w, h.Datastores.Delete(r.Context(), r.PathValue("ws"), r.PathValue("name")))
}

// ListDatastoreSecrets is POST …/datastores/{name}/listSecrets: the
// datastore's secrets, as Azure's DatastoreSecrets. Its route requires
// datastores/write, as Azure's does. The built-ins are Shoal's own file
// store, reached through Shoal's API with the caller's own token: they
// have no storage secret to hand out, and say so.
func (h Handlers) ListDatastoreSecrets(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if h.Blobs != nil && asset.IsBuiltinDatastore(name) {
		h.builtinSecrets(w, r, strings.ToLower(name))
		return
	}
	if asset.IsBuiltinDatastore(name) {
		WriteError(w, core.Errorf(core.EINVALID, "%s is Shoal's own file store: it has no storage secret to list; upload and download through Shoal (shoal data create, shoal job download) with your own token", name))
		return
	}
	d, sec, err := h.Datastores.Resolve(r.Context(), r.PathValue("ws"), name)
	if err != nil {
		WriteError(w, err)
		return
	}
	var out DatastoreSecrets
	switch d.CredentialsType {
	case asset.CredentialsAccountKey:
		out = DatastoreSecrets{SecretsType: "AccountKey", Key: sec.AccountKey}
	case asset.CredentialsSAS:
		out = DatastoreSecrets{SecretsType: "Sas", SASToken: sec.SASToken}
	case asset.CredentialsServicePrincipal:
		out = DatastoreSecrets{SecretsType: "ServicePrincipal", ClientSecret: sec.ClientSecret}
	case asset.CredentialsAccessKey:
		out = DatastoreSecrets{SecretsType: "AccessKey", SecretAccessKey: sec.SecretAccessKey}
	default:
		WriteError(w, core.Errorf(core.EINVALID, "datastore %s has no credentials (credentialsType None): there is no secret to list", d.Name))
		return
	}
	// Never cached by a proxy or a browser.
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}
