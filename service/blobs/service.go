// Package blobs is the request service behind Shoal's Blob endpoint:
// the part of Azure's Blob protocol that Azure's storage clients use to
// upload and read (azblob, azure-storage-blob, azure-ai-ml's uploads),
// on a workspace's workspaceblobstore. A blob's content is an artifact of
// the workspace's file store, written within its storage quota; its
// properties are a row of the store, written only once the content is
// whole, so that no reader ever sees half a blob. Requests carry a shared
// access signature Shoal signs (sas.go); this package checks it.
package blobs

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/store"
)

// Limits of what one request may store.
const (
	// MaxPutBlobBytes is the largest blob put in one request (Put Blob):
	// above azblob's and azure-storage-blob's single-put sizes (256 MiB
	// and 64 MiB), so that their uploads of a large file switch to blocks.
	MaxPutBlobBytes = 256 << 20
	// MaxBlockBytes is the largest block (Put Block).
	MaxBlockBytes = 256 << 20
	// MaxBlobBytes is the largest committed blob: the largest upload
	// the file store takes (the API's artifacts' limit).
	MaxBlobBytes = 2 << 30
)

// Error is a refusal in Azure Storage's terms: the HTTP status and the
// error code Azure's clients read (x-ms-error-code and the XML body).
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// fail returns an *Error.
func fail(status int, code, format string, args ...any) error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Putter stores an upload as a workspace's artifact within its storage
// quota (storage.Service.PutArtifact).
type Putter func(ctx context.Context, workspace string, r io.Reader, max int64) (string, error)

// Config wires a Service.
type Config struct {
	Store store.Store
	// Files opens the artifacts blobs are made of.
	Files store.Files
	// Put stores content within the workspace's quota.
	Put Putter
	// Key signs and checks shared access signatures (the server's
	// secrets key).
	Key *sealing.Key
	// Now is the clock expiries are checked against (default time.Now).
	Now func() time.Time
	// Outputs opens jobs' kept outputs, which the read-only views serve
	// (views.go); nil serves none.
	Outputs OutputOpener
}

// Service serves the blobs of workspaces' workspaceblobstore.
type Service struct {
	store   store.Store
	files   store.Files
	put     Putter
	key     *sealing.Key
	now     func() time.Time
	outputs OutputOpener
}

// New returns the service for cfg.
func New(cfg Config) *Service {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Service{store: cfg.Store, files: cfg.Files, put: cfg.Put, key: cfg.Key, now: now, outputs: cfg.Outputs}
}

// Now is the service's clock (Config.Now): the time expiries are
// signed from and checked against, and the endpoint's answers say.
func (s *Service) Now() time.Time { return s.now() }

// Writable reports whether container is one Shoal keeps uploads in (the
// workspace's default datastore); workspaceartifactstore is read only.
func Writable(container string) bool { return strings.EqualFold(container, asset.WorkspaceBlobStore) }

// workspace returns the workspace's name as created, refusing a deleted
// one: a SAS outlives nothing it was signed for.
func (s *Service) workspace(ws string) (string, error) {
	w, err := s.findWorkspace(ws)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return "", fail(http.StatusForbidden, "AuthenticationFailed", "workspace %s does not exist (any more)", ws)
	} else if err != nil {
		return "", err
	}
	return w.Name, nil
}

// findWorkspace reads a workspace. Returns ENOTFOUND.
func (s *Service) findWorkspace(ws string) (*core.Workspace, error) {
	var w *core.Workspace
	err := s.store.View(context.Background(), func(tx store.Tx) (err error) {
		w, err = tx.GetWorkspace(ws)
		return err
	})
	return w, err
}

// Props are the HTTP properties an upload sets (x-ms-blob-content-*).
type Props struct {
	ContentType, ContentEncoding, ContentLanguage, CacheControl, ContentDisposition string
	// ContentMD5 is the whole blob's MD5 the uploader states (base64),
	// kept as given.
	ContentMD5 string
	Metadata   map[string]string
}

// Upload is a request's body: its content, its declared length and the
// MD5 of the request's content the uploader sent (Content-MD5), checked.
type Upload struct {
	Body   io.Reader
	Length int64
	MD5    string
}

// checked stores u's body as an artifact, refusing a body that is not
// its declared length or whose MD5 differs: nothing is kept of it then
// beyond the content-addressed artifact, which nothing names.
func (s *Service) checked(ctx context.Context, ws string, u Upload, max int64) (id, md5b64 string, err error) {
	if u.Length < 0 {
		return "", "", fail(http.StatusLengthRequired, "MissingContentLengthHeader", "Content-Length is required")
	}
	if u.Length > max {
		return "", "", fail(http.StatusRequestEntityTooLarge, "RequestBodyTooLarge", "the request body is %d bytes; at most %d are taken in one request: upload in blocks (Put Block, Put Block List)", u.Length, max)
	}
	h := md5.New()
	cr := &countingReader{r: io.TeeReader(u.Body, h)}
	id, err = s.put(ctx, ws, cr, u.Length)
	if err != nil {
		return "", "", err
	}
	if cr.n != u.Length {
		return "", "", fail(http.StatusBadRequest, "InvalidInput", "the body was %d bytes, Content-Length said %d", cr.n, u.Length)
	}
	sum := base64.StdEncoding.EncodeToString(h.Sum(nil))
	if u.MD5 != "" && u.MD5 != sum {
		return "", "", fail(http.StatusBadRequest, "Md5Mismatch", "the MD5 of the body (%s) differs from Content-MD5 (%s)", sum, u.MD5)
	}
	return id, sum, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// newETag is a blob's entity tag: a digest of what the write stored and
// when, quoted as Azure's.
func newETag(parts ...string) string {
	h := md5.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return `"0x` + strings.ToUpper(hex.EncodeToString(h.Sum(nil))[:15]) + `"`
}

// PutBlob stores a whole blob (Azure's Put Blob). ifNoneMatch "*"
// refuses to replace an existing blob (BlobAlreadyExists), as
// azure-storage-blob asks with overwrite=False.
func (s *Service) PutBlob(ctx context.Context, ws, container, name string, u Upload, p Props, ifNoneMatch string) (*blobs.Blob, error) {
	ws, err := s.workspace(ws)
	if err != nil {
		return nil, err
	}
	if ifNoneMatch == "*" {
		// Checked before the body is read too, so that a refused upload
		// costs nothing; checked again where it is stored.
		if _, err := s.get(ctx, ws, container, name); err == nil {
			return nil, fail(http.StatusConflict, "BlobAlreadyExists", "the specified blob already exists")
		}
	}
	id, sum, err := s.checked(ctx, ws, u, MaxPutBlobBytes)
	if err != nil {
		return nil, err
	}
	if p.ContentMD5 == "" {
		p.ContentMD5 = sum
	}
	return s.commit(ctx, ws, container, name, id, u.Length, p, ifNoneMatch)
}

// commit stores a blob whose content is whole (artifact id of size
// bytes) and drops the blocks staged for it.
func (s *Service) commit(ctx context.Context, ws, container, name, id string, size int64, p Props, ifNoneMatch string) (*blobs.Blob, error) {
	now := s.now().UTC()
	b := &blobs.Blob{Workspace: ws, Container: strings.ToLower(container), Name: name, Artifact: id, Size: size,
		ContentType: p.ContentType, ContentEncoding: p.ContentEncoding, ContentLanguage: p.ContentLanguage, CacheControl: p.CacheControl,
		ContentDisposition: p.ContentDisposition, ContentMD5: p.ContentMD5, Metadata: p.Metadata,
		ETag: newETag(id, now.Format(time.RFC3339Nano))}
	if b.ContentType == "" {
		b.ContentType = "application/octet-stream"
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		b.Created = time.Time{} // a run again starts over: PutBlob sets a new blob's
		if err := frozen(tx, ws, container, name); err != nil {
			return err
		}
		if old, err := tx.GetBlob(ws, container, name); err == nil {
			if ifNoneMatch == "*" {
				return fail(http.StatusConflict, "BlobAlreadyExists", "the specified blob already exists")
			}
			b.Created = old.Created
		} else if core.ErrorCode(err) != core.ENOTFOUND {
			return err
		}
		if err := tx.PutBlob(b); err != nil {
			return err
		}
		return tx.DeleteBlobBlocks(ws, container, name)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// PutBlock stages a block of a blob (Azure's Put Block).
func (s *Service) PutBlock(ctx context.Context, ws, container, name, blockID string, u Upload) error {
	if err := blobs.CheckBlockID(blockID); err != nil {
		return fail(http.StatusBadRequest, "InvalidQueryParameterValue", "%s", core.ErrorMessage(err))
	}
	ws, err := s.workspace(ws)
	if err != nil {
		return err
	}
	id, _, err := s.checked(ctx, ws, u, MaxBlockBytes)
	if err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		return tx.PutBlobBlock(&blobs.Block{Workspace: ws, Container: strings.ToLower(container), Blob: name, ID: blockID, Artifact: id, Size: u.Length})
	})
}

// CommitBlocks commits a blob from its staged blocks, in ids' order
// (Azure's Put Block List). A block never staged for this blob is
// InvalidBlockList and nothing changes.
func (s *Service) CommitBlocks(ctx context.Context, ws, container, name string, ids []string, p Props) (*blobs.Blob, error) {
	ws, err := s.workspace(ws)
	if err != nil {
		return nil, err
	}
	if len(ids) > blobs.MaxBlocks {
		return nil, fail(http.StatusBadRequest, "InvalidBlockList", "the block list has %d blocks; a blob has at most %d", len(ids), blobs.MaxBlocks)
	}
	var staged []*blobs.Block
	if err := s.store.View(ctx, func(tx store.Tx) (err error) {
		staged, err = tx.ListBlobBlocks(ws, container, name)
		return err
	}); err != nil {
		return nil, err
	}
	byID := map[string]*blobs.Block{}
	for _, b := range staged {
		byID[b.ID] = b
	}
	var total int64
	parts := make([]*blobs.Block, 0, len(ids))
	for _, id := range ids {
		b, ok := byID[id]
		if !ok {
			return nil, fail(http.StatusBadRequest, "InvalidBlockList", "block %q was never uploaded for this blob (or was committed already): upload it with Put Block first", core.Short(id))
		}
		total += b.Size
		parts = append(parts, b)
	}
	if total > MaxBlobBytes {
		return nil, fail(http.StatusRequestEntityTooLarge, "RequestBodyTooLarge", "the blob would be %d bytes; Shoal keeps blobs of at most %d", total, int64(MaxBlobBytes))
	}
	if len(parts) == 1 {
		// One block is the blob's content as it is: no copy, which
		// would need the quota's room for it twice.
		return s.commit(ctx, ws, container, name, parts[0].Artifact, total, p, "")
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.concat(ws, parts, pw)) }()
	id, err := s.put(ctx, ws, pr, total)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, ws, container, name, id, total, p, "")
}

// concat writes the blocks' content to w in order.
func (s *Service) concat(ws string, parts []*blobs.Block, w io.Writer) error {
	for _, b := range parts {
		rc, err := s.files.OpenArtifact(ws, b.Artifact)
		if err != nil {
			return err
		}
		_, err = io.Copy(w, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// get reads a committed blob's properties.
func (s *Service) get(ctx context.Context, ws, container, name string) (*blobs.Blob, error) {
	var b *blobs.Blob
	err := s.store.View(ctx, func(tx store.Tx) (err error) {
		b, err = tx.GetBlob(ws, container, name)
		return err
	})
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, fail(http.StatusNotFound, "BlobNotFound", "the specified blob does not exist")
	}
	return b, err
}

// Properties returns a committed blob's properties (Get Blob
// Properties).
func (s *Service) Properties(ctx context.Context, ws, container, name string) (*blobs.Blob, error) {
	ws, err := s.workspace(ws)
	if err != nil {
		return nil, err
	}
	if v := viewOf(container, name); v != nil {
		b, _, err := s.openView(ctx, ws, container, name, v, true)
		return b, err
	}
	return s.get(ctx, ws, container, name)
}

// Open returns a committed blob and its content (Get Blob).
func (s *Service) Open(ctx context.Context, ws, container, name string) (*blobs.Blob, io.ReadCloser, error) {
	if v := viewOf(container, name); v != nil {
		ws, err := s.workspace(ws)
		if err != nil {
			return nil, nil, err
		}
		return s.openView(ctx, ws, container, name, v, false)
	}
	b, err := s.Properties(ctx, ws, container, name)
	if err != nil {
		return nil, nil, err
	}
	rc, err := s.files.OpenArtifact(b.Workspace, b.Artifact)
	if err != nil {
		return nil, nil, err
	}
	return b, rc, nil
}

// SetMetadata replaces a blob's metadata (Set Blob Metadata).
func (s *Service) SetMetadata(ctx context.Context, ws, container, name string, meta map[string]string) (*blobs.Blob, error) {
	ws, err := s.workspace(ws)
	if err != nil {
		return nil, err
	}
	var b *blobs.Blob
	err = s.store.Update(ctx, func(tx store.Tx) (err error) {
		b, err = tx.GetBlob(ws, container, name)
		if err != nil {
			return err
		}
		b.Metadata = meta
		b.ETag = newETag(b.Artifact, s.now().UTC().Format(time.RFC3339Nano), "metadata")
		return tx.PutBlob(b)
	})
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, fail(http.StatusNotFound, "BlobNotFound", "the specified blob does not exist")
	}
	return b, err
}

// MaxListResults is the most blobs one List Blobs answers, as Azure.
const MaxListResults = 5000

// List returns up to max blobs of a container by prefix after marker,
// and the marker of the next page ("" at the end).
func (s *Service) List(ctx context.Context, ws, container, prefix, marker string, max int) ([]*blobs.Blob, string, error) {
	ws, err := s.workspace(ws)
	if err != nil {
		return nil, "", err
	}
	if max <= 0 || max > MaxListResults {
		max = MaxListResults
	}
	// A prefix inside a job's output lists that output's files; a
	// shorter one lists the container's own uploads only (views are not
	// enumerated job by job).
	if v := viewOf(container, prefix); v != nil {
		return s.listView(ctx, ws, container, prefix, marker, max, v)
	}
	if !Writable(container) {
		return []*blobs.Blob{}, "", nil
	}
	var out []*blobs.Blob
	err = s.store.View(ctx, func(tx store.Tx) (err error) {
		out, err = tx.ListBlobs(ws, container, prefix, marker, max+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > max {
		out = out[:max]
		next = out[max-1].Name
	}
	return out, next, nil
}
