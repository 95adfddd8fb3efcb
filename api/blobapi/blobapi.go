// Package blobapi serves Shoal's Blob endpoint: the part of Azure's Blob
// protocol that Azure's storage clients use to upload and read (Put
// Blob, Put Block, Put Block List, Set Blob Metadata, Get Blob with a
// range, Get Blob Properties, List Blobs), on the workspaces'
// workspaceblobstore, authorized by a shared access signature Shoal
// signs (service/blobs). Answers and refusals are Azure's: its headers,
// its XML, its error codes (x-ms-error-code), which the clients act on
// (BlobNotFound, BlobAlreadyExists, InvalidRange...).
//
// The endpoint is reached at the built-in datastores' account
// (asset.BuiltinAccountName, "shoal") two ways, as Azure's clients build
// URLs: host-style, https://shoal.blob.<suffix>/<container>/<blob> (what
// azure-ai-ml builds from a datastore: the name must resolve to the
// server), and path-style, https://<server>/shoal/<container>/<blob>
// (what the clients parse from a URL whose host is an IP address, as
// for Azurite).
package blobapi

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	domblobs "github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/service/blobs"
)

// Account is the storage account the endpoint answers for: the built-in
// datastores' account name.
const Account = asset.BuiltinAccountName

// AzureHost is the account's host as azure-ai-ml builds it from a
// datastore (https://<account>.blob.<the cloud's storage suffix>: for
// Azure's public cloud, the only suffix it knows besides two sovereign
// clouds'). Clients reach Shoal under it when the name resolves to the
// server (docs/guides/azure-sdks.md); the server's own certificate names
// it (--tls).
const AzureHost = Account + ".blob.core.windows.net"

// apiVersion is the storage service version the answers say
// (x-ms-version).
const apiVersion = "2021-08-06"

// MaxBlockListBytes bounds a Put Block List body (50,000 IDs of up to 88
// characters in their XML elements).
const MaxBlockListBytes = 8 << 20

// Handler serves the Blob endpoint over a blobs.Service.
type Handler struct {
	Svc *blobs.Service
	Log *slog.Logger
}

// Match reports whether r is for the Blob endpoint: its host is the
// account's Blob host (shoal.blob.<suffix>) or its path starts with the
// account (/shoal/).
func Match(r *http.Request) bool {
	return hostStyle(r) || strings.HasPrefix(r.URL.Path, "/"+Account+"/") || r.URL.Path == "/"+Account
}

// hostStyle reports whether r's host names the account
// (shoal.blob.core.windows.net, shoal.blob.example.lab).
func hostStyle(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.HasPrefix(strings.ToLower(host), Account+".blob.")
}

// Admission is how the server admits a Blob request: anonymous until its
// SAS is checked (Check), then as the SAS's caller.
type Admission struct {
	// Anonymous runs h in one of the anonymous slots, or answers 429
	// itself.
	Anonymous func(w http.ResponseWriter, r *http.Request, h func())
	// Signed serves a request whose SAS checked: a transfer is an upload
	// or download body, which gets the server's transfer deadlines.
	Signed func(w http.ResponseWriter, r *http.Request, caller string, transfer bool, h http.Handler)
}

// Front returns the endpoint's front door: a request's SAS is checked in
// an anonymous slot (a signature and a time: no body is read), and the
// request is served as its signature's caller, with an upload's or a
// download's deadlines, once it checks; one that does not is answered
// as anonymous, with Azure's refusal.
func (h *Handler) Front(a Admission) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		signed, ran := false, false
		var caller string
		a.Anonymous(w, r, func() {
			ran = true
			container, _ := target(r)
			g, err := h.Svc.Check(r.URL.Query(), container)
			if err != nil {
				h.ServeHTTP(w, r)
				return
			}
			signed = true
			// Every SAS of a workspace is one caller: whoever holds
			// one shares the workspace's transfers (keyed by the
			// signature, a new listSecrets would be a new caller, and
			// one Contributor could open transfers without bound).
			caller = "sas:" + g.Workspace
		})
		if !ran || !signed {
			return
		}
		_, name := target(r)
		transfer := name != "" && r.URL.Query().Get("comp") != "metadata" && r.URL.Query().Get("comp") != "blocklist" &&
			(r.Method == http.MethodPut || r.Method == http.MethodGet)
		a.Signed(w, r, caller, transfer, h)
	})
}

// target splits r's path into container and blob name (blob "" for the
// container itself).
func target(r *http.Request) (container, blob string) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	if !hostStyle(r) {
		p = strings.TrimPrefix(strings.TrimPrefix(p, Account), "/")
	}
	container, blob, _ = strings.Cut(p, "/")
	return container, blob
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-ms-version", apiVersion)
	w.Header().Set("x-ms-request-id", requestID(r))
	w.Header().Set("Date", h.Svc.Now().UTC().Format(http.TimeFormat))
	// The endpoint answers on the studio's origin and keeps whatever
	// type a client stored: no answer of it may run as a page of that
	// origin (a stored text/html would read the studio's CSRF token with
	// the viewer's cookie). A sandboxed document that loads nothing, never
	// sniffed into another type; Azure's clients read bytes and ignore it.
	w.Header().Set("Content-Security-Policy", "sandbox; default-src 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := h.serve(w, r); err != nil {
		h.writeError(w, r, err)
	}
}

// requestID echoes the client's request ID, as Azure does, for its logs.
func requestID(r *http.Request) string {
	if id := r.Header.Get("x-ms-client-request-id"); id != "" && len(id) <= 128 {
		return id
	}
	return "shoal"
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	if id := r.Header.Get("x-ms-client-request-id"); id != "" && len(id) <= 128 {
		w.Header().Set("x-ms-client-request-id", id)
	}
	container, name := target(r)
	q := r.URL.Query()
	switch {
	case container == "":
		return fail(http.StatusBadRequest, "InvalidUri", "the URL names no container: %s/<container>/<blob>", Account)
	case !strings.EqualFold(container, asset.WorkspaceBlobStore) && !strings.EqualFold(container, asset.WorkspaceArtifactStore):
		return fail(http.StatusNotFound, "ContainerNotFound", "Shoal's account %s has two containers: %s and %s (read only)", Account, asset.WorkspaceBlobStore, asset.WorkspaceArtifactStore)
	}
	if name == "" {
		if q.Get("restype") != "container" {
			return fail(http.StatusBadRequest, "InvalidUri", "the URL names no blob")
		}
		switch {
		case r.Method == http.MethodGet && q.Get("comp") == "list":
			return h.list(w, r, container)
		case (r.Method == http.MethodGet || r.Method == http.MethodHead) && q.Get("comp") == "":
			sas, err := h.Svc.Verify(q, container, "", 'r')
			if err != nil {
				if sas, err = h.Svc.Verify(q, container, "", 'l'); err != nil {
					return err
				}
			}
			_ = sas
			w.Header().Set("ETag", `"0x0"`)
			w.Header().Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusOK)
			return nil
		}
		return fail(http.StatusNotImplemented, "NotImplemented", "Shoal's Blob endpoint does not serve %s ?restype=container&comp=%s", r.Method, core.Short(q.Get("comp")))
	}
	if dir := strings.TrimRight(name, "/"); dir != name && (r.Method == http.MethodGet || r.Method == http.MethodHead) && q.Get("comp") == "" && domblobs.CheckName(dir) == nil {
		// A folder's name (azureml/<job>/<output>/), which azure-ai-ml's
		// jobs.download asks for before it lists the folder: no blob can
		// have it, so it is not found, as on Azure, not a bad name.
		if _, err := h.authorize(r, container, dir, 'r'); err != nil {
			return err
		}
		return fail(http.StatusNotFound, "BlobNotFound", "The specified blob does not exist: %s is a folder's name", core.Short(name))
	}
	if err := domblobs.CheckName(name); err != nil {
		return fail(http.StatusBadRequest, "InvalidResourceName", "%s", core.ErrorMessage(err))
	}
	comp := q.Get("comp")
	switch {
	case r.Method == http.MethodPut && comp == "":
		return h.putBlob(w, r, container, name)
	case r.Method == http.MethodPut && comp == "block":
		return h.putBlock(w, r, container, name)
	case r.Method == http.MethodPut && comp == "blocklist":
		return h.putBlockList(w, r, container, name)
	case r.Method == http.MethodPut && comp == "metadata":
		return h.setMetadata(w, r, container, name)
	case r.Method == http.MethodGet && comp == "":
		return h.getBlob(w, r, container, name, true)
	case r.Method == http.MethodHead && comp == "":
		return h.getBlob(w, r, container, name, false)
	}
	return fail(http.StatusNotImplemented, "NotImplemented", "Shoal's Blob endpoint does not serve %s ?comp=%s (it serves Put Blob, Put Block, Put Block List, Set Blob Metadata, Get Blob, Get Blob Properties, List Blobs)", r.Method, core.Short(comp))
}

// fail is blobs' refusal, for this package's own checks.
func fail(status int, code, format string, args ...any) error {
	return &blobs.Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// authorize checks r's SAS for perm on container/name and returns its
// workspace.
func (h *Handler) authorize(r *http.Request, container, name string, perm byte) (string, error) {
	sas, err := h.Svc.Verify(r.URL.Query(), container, name, perm)
	if err != nil {
		return "", err
	}
	if perm == 'w' && blobs.IsView(container, name) {
		return "", fail(http.StatusForbidden, "AuthorizationPermissionMismatch", "%s/%s is read only: Shoal keeps jobs' outputs there (azureml/<job>/<output>/ on %s, ExperimentRun/dcid.<job>/ on %s)",
			container, core.Short(name), asset.WorkspaceBlobStore, asset.WorkspaceArtifactStore)
	}
	return sas.Workspace, nil
}

// contentLength is the request's declared body length, -1 when it has
// none (a chunked body): Azure requires it on uploads, and a body over
// the limit is refused by it before a byte is read.
func contentLength(r *http.Request) int64 {
	if r.Header.Get("Content-Length") == "" && r.ContentLength <= 0 {
		if r.ContentLength == 0 {
			return 0
		}
		return -1
	}
	return r.ContentLength
}

// props reads the properties an upload sets from its x-ms-blob-* and
// x-ms-meta-* headers.
func props(r *http.Request) (blobs.Props, error) {
	meta, err := metadata(r.Header)
	if err != nil {
		return blobs.Props{}, err
	}
	return blobs.Props{
		ContentType: r.Header.Get("x-ms-blob-content-type"), ContentEncoding: r.Header.Get("x-ms-blob-content-encoding"),
		ContentLanguage: r.Header.Get("x-ms-blob-content-language"), CacheControl: r.Header.Get("x-ms-blob-cache-control"),
		ContentDisposition: r.Header.Get("x-ms-blob-content-disposition"), ContentMD5: r.Header.Get("x-ms-blob-content-md5"),
		Metadata: meta,
	}, nil
}

// metadata reads x-ms-meta-* headers, names lower-cased.
func metadata(hd http.Header) (map[string]string, error) {
	var out map[string]string
	size := 0
	for k, vs := range hd {
		lk := strings.ToLower(k)
		name, ok := strings.CutPrefix(lk, "x-ms-meta-")
		if !ok || len(vs) == 0 {
			continue
		}
		if name == "" {
			return nil, fail(http.StatusBadRequest, "InvalidMetadata", "a metadata header has no name")
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = vs[0]
		size += len(name) + len(vs[0])
	}
	if size > domblobs.MaxMetadataBytes {
		return nil, fail(http.StatusBadRequest, "MetadataTooLarge", "metadata is %d bytes; at most %d", size, domblobs.MaxMetadataBytes)
	}
	return out, nil
}

func (h *Handler) putBlob(w http.ResponseWriter, r *http.Request, container, name string) error {
	ws, err := h.authorize(r, container, name, 'w')
	if err != nil {
		return err
	}
	if t := r.Header.Get("x-ms-blob-type"); !strings.EqualFold(t, "BlockBlob") {
		return fail(http.StatusBadRequest, "InvalidHeaderValue", "x-ms-blob-type is %q: Shoal keeps block blobs (BlockBlob) only", core.Short(t))
	}
	p, err := props(r)
	if err != nil {
		return err
	}
	if p.ContentType == "" {
		p.ContentType = r.Header.Get("Content-Type")
	}
	b, err := h.Svc.PutBlob(r.Context(), ws, container, name, blobs.Upload{Body: r.Body, Length: contentLength(r), MD5: r.Header.Get("Content-MD5")}, p, r.Header.Get("If-None-Match"))
	if err != nil {
		return err
	}
	writeBlobHeaders(w, b, false)
	w.Header().Set("Content-MD5", b.ContentMD5)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (h *Handler) putBlock(w http.ResponseWriter, r *http.Request, container, name string) error {
	ws, err := h.authorize(r, container, name, 'w')
	if err != nil {
		return err
	}
	md5 := r.Header.Get("Content-MD5")
	if err := h.Svc.PutBlock(r.Context(), ws, container, name, r.URL.Query().Get("blockid"), blobs.Upload{Body: r.Body, Length: contentLength(r), MD5: md5}); err != nil {
		return err
	}
	if md5 != "" {
		w.Header().Set("Content-MD5", md5)
	}
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// blockList is Put Block List's body: IDs in the order of the blob,
// each under the list it is looked up in (Shoal looks every one up
// among the blocks staged for the blob).
type blockList struct {
	Items []struct {
		XMLName xml.Name
		ID      string `xml:",chardata"`
	} `xml:",any"`
}

func (h *Handler) putBlockList(w http.ResponseWriter, r *http.Request, container, name string) error {
	ws, err := h.authorize(r, container, name, 'w')
	if err != nil {
		return err
	}
	if r.ContentLength > MaxBlockListBytes {
		return fail(http.StatusRequestEntityTooLarge, "RequestBodyTooLarge", "the block list is %d bytes; at most %d", r.ContentLength, MaxBlockListBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBlockListBytes+1))
	if err != nil {
		return err
	}
	if len(raw) > MaxBlockListBytes {
		return fail(http.StatusRequestEntityTooLarge, "RequestBodyTooLarge", "the block list is larger than %d bytes", MaxBlockListBytes)
	}
	var bl blockList
	if err := xml.Unmarshal(raw, &bl); err != nil {
		return fail(http.StatusBadRequest, "InvalidXmlDocument", "the block list is not XML: %s", core.Short(err.Error()))
	}
	ids := make([]string, 0, len(bl.Items))
	for _, it := range bl.Items {
		switch it.XMLName.Local {
		case "Latest", "Uncommitted":
		case "Committed":
			return fail(http.StatusBadRequest, "InvalidBlockList", "block %q is named as Committed: Shoal commits blocks uploaded for the blob since it was last written (Latest or Uncommitted)", core.Short(it.ID))
		default:
			return fail(http.StatusBadRequest, "InvalidXmlNodeValue", "<%s> is not Latest, Uncommitted or Committed", core.Short(it.XMLName.Local))
		}
		ids = append(ids, strings.TrimSpace(it.ID))
	}
	p, err := props(r)
	if err != nil {
		return err
	}
	b, err := h.Svc.CommitBlocks(r.Context(), ws, container, name, ids, p)
	if err != nil {
		return err
	}
	writeBlobHeaders(w, b, false)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (h *Handler) setMetadata(w http.ResponseWriter, r *http.Request, container, name string) error {
	ws, err := h.authorize(r, container, name, 'w')
	if err != nil {
		return err
	}
	meta, err := metadata(r.Header)
	if err != nil {
		return err
	}
	b, err := h.Svc.SetMetadata(r.Context(), ws, container, name, meta)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", b.ETag)
	w.Header().Set("Last-Modified", b.Modified.UTC().Format(http.TimeFormat))
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(http.StatusOK)
	return nil
}

// writeBlobHeaders sets a blob's properties as Azure's response headers;
// full adds what Get Blob and Get Blob Properties answer.
func writeBlobHeaders(w http.ResponseWriter, b *domblobs.Blob, full bool) {
	hd := w.Header()
	hd.Set("ETag", b.ETag)
	hd.Set("Last-Modified", b.Modified.UTC().Format(http.TimeFormat))
	if !full {
		return
	}
	hd.Set("x-ms-creation-time", b.Created.UTC().Format(http.TimeFormat))
	hd.Set("x-ms-blob-type", "BlockBlob")
	hd.Set("x-ms-lease-status", "unlocked")
	hd.Set("x-ms-lease-state", "available")
	hd.Set("x-ms-server-encrypted", "true")
	hd.Set("x-ms-access-tier", "Hot")
	hd.Set("x-ms-access-tier-inferred", "true")
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("Content-Type", b.ContentType)
	for k, v := range map[string]string{"Content-Encoding": b.ContentEncoding, "Content-Language": b.ContentLanguage,
		"Cache-Control": b.CacheControl, "Content-Disposition": b.ContentDisposition} {
		if v != "" {
			hd.Set(k, v)
		}
	}
	// Written as Azure writes them, lower case: azure-storage-blob reads
	// metadata from the headers that start with "x-ms-meta-" exactly.
	for k, v := range b.Metadata {
		hd["x-ms-meta-"+k] = []string{v}
	}
}

// errorBody is Azure Storage's XML error.
type errorBody struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

// writeError answers err as Azure Storage does: the status, the code in
// x-ms-error-code and, but for HEAD, the XML body.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var be *blobs.Error
	if !errors.As(err, &be) {
		be = mapError(err)
		if be.Status == http.StatusInternalServerError && h.Log != nil {
			h.Log.Error("blob endpoint", "method", r.Method, "path", r.URL.Path, "err", err)
		}
	}
	// The body of an unread upload is drained no further.
	w.Header().Set("Connection", "close")
	w.Header().Set("x-ms-error-code", be.Code)
	if r.Method == http.MethodHead {
		w.WriteHeader(be.Status)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(be.Status)
	out, _ := xml.Marshal(errorBody{Code: be.Code, Message: be.Message + "\nRequestId:" + requestID(r) + "\nTime:" + h.Svc.Now().UTC().Format(time.RFC3339)})
	_, _ = w.Write(append([]byte(xml.Header), out...))
}

// mapError turns a core error into Azure Storage's terms.
func mapError(err error) *blobs.Error {
	msg := core.ErrorMessage(err)
	switch core.ErrorCode(err) {
	case core.EUNAUTHORIZED:
		return &blobs.Error{Status: http.StatusForbidden, Code: "AuthenticationFailed", Message: "Server failed to authenticate the request: " + msg}
	case core.EFORBIDDEN:
		return &blobs.Error{Status: http.StatusForbidden, Code: "AuthorizationPermissionMismatch", Message: "This request is not authorized to perform this operation using this permission: " + msg}
	case core.ENOTFOUND:
		return &blobs.Error{Status: http.StatusNotFound, Code: "BlobNotFound", Message: msg}
	case core.EQUOTA:
		return &blobs.Error{Status: http.StatusForbidden, Code: "AccountLimitExceeded", Message: msg}
	case core.ESTORAGEFULL:
		return &blobs.Error{Status: http.StatusServiceUnavailable, Code: "ServerBusy", Message: msg}
	case core.EINVALID:
		return &blobs.Error{Status: http.StatusBadRequest, Code: "InvalidInput", Message: msg}
	}
	if errors.Is(err, context.Canceled) {
		return &blobs.Error{Status: http.StatusBadRequest, Code: "InvalidInput", Message: "the request ended early"}
	}
	return &blobs.Error{Status: http.StatusInternalServerError, Code: "InternalError", Message: "the server encountered an internal error; it is in the server's log"}
}

// encodeMarker and decodeMarker keep List Blobs' NextMarker opaque
// (it may hold bytes that are not text).
func encodeMarker(m string) string { return base64.RawURLEncoding.EncodeToString([]byte(m)) }

func decodeMarker(m string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(m)
	if err != nil {
		return "", fail(http.StatusBadRequest, "OutOfRangeInput", "marker is not one Shoal gave")
	}
	return string(raw), nil
}

// atoiOr parses s, def when empty.
func atoiOr(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fail(http.StatusBadRequest, "OutOfRangeQueryParameterValue", "maxresults %q is not a positive number", core.Short(s))
	}
	return n, nil
}
