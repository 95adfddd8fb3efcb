package arm

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/service/blobs"
)

// SASLifetime is how long a SAS that listSecrets or startPendingUpload
// answers is good for: long enough for a large upload, short enough that
// a leaked one soon stops (docs/security.md).
const SASLifetime = 8 * time.Hour

// CodeRoutes returns the ARM routes of code assets over h.CodeSvc; its
// version list also filters by hash (listVersionsByHash).
func (h Handlers) CodeRoutes() AssetRoutes {
	routes := newAssetRoutes(h, h.CodeSvc, "a", "code", func(scope Scope, c *asset.Code) any { return armasset.ToCodeVersion(scope, c) },
		armasset.FromCodeVersion, armasset.CodeVersionError)
	all := routes.ListVersions
	routes.ListVersions = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("hash") == "" {
			all(w, r)
			return
		}
		h.listCodeVersionsByHash(w, r)
	}
	return routes
}

// listCodeVersionsByHash is GET …/codes/{name}/versions?hash=<h>[&hashVersion=<v>]:
// the versions whose properties say that hash, as azure-ai-ml asks
// before it uploads code again.
func (h Handlers) listCodeVersionsByHash(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	list, err := h.CodeSvc.List(r.Context(), asset.AssetFilter{Workspace: r.PathValue("ws"), Name: r.PathValue("name")})
	if err != nil {
		WriteError(w, err)
		return
	}
	out := []any{}
	for _, c := range list {
		if c.Properties["hash_sha256"] != q.Get("hash") {
			continue
		}
		if hv := q.Get("hashVersion"); hv != "" && c.Properties["hash_version"] != hv {
			continue
		}
		out = append(out, armasset.ToCodeVersion(scopeOf(r), c))
	}
	writeList(w, out, "")
}

// PendingUploadResponse is Azure's PendingUploadResponseDto.
type PendingUploadResponse struct {
	BlobReferenceForConsumption BlobReference `json:"blobReferenceForConsumption"`
	PendingUploadID             string        `json:"pendingUploadId"`
	PendingUploadType           string        `json:"pendingUploadType"`
}

// BlobReference is Azure's BlobReferenceForConsumptionDto: the folder to
// upload to and a SAS URI for it.
type BlobReference struct {
	BlobURI             string                  `json:"blobUri"`
	StorageAccountArmID string                  `json:"storageAccountArmId,omitempty"`
	Credential          PendingUploadCredential `json:"credential"`
}

// PendingUploadCredential is Azure's PendingUploadCredentialDto.
type PendingUploadCredential struct {
	CredentialType string `json:"credentialType"`
	SASURI         string `json:"sasUri"`
}

// StartPendingUpload is POST …/codes/{name}/versions/{version}/startPendingUpload:
// a new folder of workspaceblobstore (LocalUpload/<pendingUploadId>) and
// a SAS URI that may write and read that folder only, for SASLifetime.
// The SAS URI is the folder's URL, which Azure's clients read as a
// container URL (container = the last segment): their uploads land
// under the folder.
func (h Handlers) StartPendingUpload(w http.ResponseWriter, r *http.Request) {
	if h.Blobs == nil {
		WriteError(w, core.Errorf(core.EUNAVAILABLE, "this server has no secrets key: it signs no upload SAS"))
		return
	}
	var req struct {
		PendingUploadID   string `json:"pendingUploadId"`
		PendingUploadType string `json:"pendingUploadType"`
	}
	if body, err := io.ReadAll(r.Body); err == nil && len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			WriteError(w, core.FieldErrorf("body", "not a PendingUploadRequestDto: %v", err))
			return
		}
	}
	ws, err := h.Svc.FindWorkspace(r.Context(), r.PathValue("ws"))
	if err != nil {
		WriteError(w, err)
		return
	}
	// The ID is the server's: a client's would let it name (and so
	// write into) another upload's folder.
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	id := hex.EncodeToString(raw)
	folder := "LocalUpload/" + id
	base := h.blobAccountURL(r) + "/" + asset.WorkspaceBlobStore + "/" + folder
	sas := h.Blobs.SignString(blobs.SAS{Workspace: ws.Name, Created: ws.CreatedOn, Container: asset.WorkspaceBlobStore, Prefix: folder + "/", Perms: "racwl",
		Expiry: h.Blobs.Now().Add(SASLifetime)})
	writeJSON(w, http.StatusOK, PendingUploadResponse{
		BlobReferenceForConsumption: BlobReference{BlobURI: base, Credential: PendingUploadCredential{CredentialType: "SAS", SASURI: base + "?" + sas}},
		PendingUploadID:             id, PendingUploadType: "TemporaryBlobReference",
	})
}

// blobAccountURL is the Blob endpoint's account URL that SAS URIs name:
// path-style on the server's public URL (<public URL>/shoal), which
// Azure's clients take as given (they parse no account from a URL whose
// host is not <account>.blob.core.<suffix>).
func (h Handlers) blobAccountURL(r *http.Request) string {
	base := strings.TrimSuffix(h.Svc.PublicURL(), "/")
	if base == "" {
		// No public URL configured: the URL the caller reached.
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + "/" + asset.BuiltinAccountName
}

// builtinSecrets answers listSecrets of a built-in datastore: a SAS over
// the workspace's whole container for SASLifetime, which azure-ai-ml
// uploads and downloads with: read, write and list on
// workspaceblobstore, read and list on workspaceartifactstore (jobs'
// artifacts, read only).
func (h Handlers) builtinSecrets(w http.ResponseWriter, r *http.Request, container string) {
	ws, err := h.Svc.FindWorkspace(r.Context(), r.PathValue("ws"))
	if err != nil {
		WriteError(w, err)
		return
	}
	perms := "racwl"
	if !blobs.Writable(container) {
		perms = "rl"
	}
	sas := h.Blobs.SignString(blobs.SAS{Workspace: ws.Name, Created: ws.CreatedOn, Container: container, Perms: perms, Expiry: h.Blobs.Now().Add(SASLifetime)})
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, DatastoreSecrets{SecretsType: "Sas", SASToken: sas})
}

// showBlobStoreSAS shows the built-ins' credentials as a SAS (which
// listSecrets answers) when this server signs them, so that azure-ai-ml
// asks listSecrets for one.
func (h Handlers) showBlobStoreSAS(d *DatastoreResource) {
	if h.Blobs != nil && asset.IsBuiltinDatastore(d.Name) {
		d.Properties.Credentials.CredentialsType = "Sas"
	}
}
