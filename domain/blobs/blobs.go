// Package blobs is what Shoal keeps of the blobs Azure's storage
// clients upload to a workspace's default datastore (workspaceblobstore)
// through Shoal's Blob endpoint: a committed blob (its content an
// artifact of the workspace's file store, its properties and metadata
// here), and the blocks staged for a blob until a block list commits
// them. Names are checked here, once, for every path that takes one.
package blobs

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shoal-ml/shoal/domain/core"
)

// MaxNameBytes is the longest blob name Azure accepts (1,024 characters;
// Shoal counts bytes, which is stricter).
const MaxNameBytes = 1024

// MaxBlockIDBytes is the longest block ID (Azure: 64 bytes before its
// base64 encoding).
const MaxBlockIDBytes = 64

// MaxBlocks is how many blocks one blob may have, as in Azure.
const MaxBlocks = 50000

// MaxMetadataBytes bounds a blob's metadata, names and values together
// (Azure's 8 KiB).
const MaxMetadataBytes = 8 << 10

// Blob is a committed blob: whole, never half-written (it is stored only
// once its content is).
type Blob struct {
	Workspace string `json:"-"`
	Container string `json:"-"`
	Name      string `json:"-"`
	// Artifact is the content's artifact in the workspace's file store
	// (sha256:<hex>).
	Artifact string `json:"artifact"`
	Size     int64  `json:"size"`
	// ContentType, ContentEncoding, ContentLanguage, CacheControl and
	// ContentDisposition are the HTTP headers the blob is served with, as
	// the uploader set them (x-ms-blob-content-*).
	ContentType        string `json:"content_type,omitempty"`
	ContentEncoding    string `json:"content_encoding,omitempty"`
	ContentLanguage    string `json:"content_language,omitempty"`
	CacheControl       string `json:"cache_control,omitempty"`
	ContentDisposition string `json:"content_disposition,omitempty"`
	// ContentMD5 is the base64 MD5 of the content, as Azure gives it for
	// a blob put whole; "" for a blob committed from blocks unless the
	// uploader set it.
	ContentMD5 string `json:"content_md5,omitempty"`
	// Metadata are the x-ms-meta-* pairs (names lower-cased).
	Metadata map[string]string `json:"metadata,omitempty"`
	// ETag changes with every write of the blob or its metadata.
	ETag     string    `json:"etag"`
	Created  time.Time `json:"created"`
	Modified time.Time `json:"modified"`
}

// Block is a block staged for a blob by Put Block, until Put Block List
// commits the blob (which removes its blocks).
type Block struct {
	Workspace string
	Container string
	Blob      string
	// ID is the block ID as sent (base64 text).
	ID       string
	Artifact string
	Size     int64
}

// CheckName refuses a blob name Shoal does not keep: empty, too long, not
// UTF-8, with a NUL, a backslash, an empty, "." or ".." segment or a
// leading slash: a name maps to a path of a datastore, and such names are
// the ones that would reach outside it or read as another.
func CheckName(name string) error {
	switch {
	case name == "":
		return core.FieldErrorf("blob", "is required")
	case len(name) > MaxNameBytes:
		return core.FieldErrorf("blob", "is longer than %d bytes", MaxNameBytes)
	case !utf8.ValidString(name):
		return core.FieldErrorf("blob", "is not UTF-8")
	case strings.ContainsAny(name, "\\\x00"):
		return core.FieldErrorf("blob", "%q holds a backslash or NUL", core.Short(name))
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return core.FieldErrorf("blob", "%q has an empty, '.' or '..' segment: a blob name is a path inside its container", core.Short(name))
		}
	}
	return nil
}

// CheckBlockID refuses a block ID that is empty or longer than Azure's
// limit (its base64 form: 4/3 of MaxBlockIDBytes).
func CheckBlockID(id string) error {
	if id == "" || len(id) > (MaxBlockIDBytes+2)/3*4 {
		return core.FieldErrorf("blockid", "must be 1 to %d base64 characters", (MaxBlockIDBytes+2)/3*4)
	}
	return nil
}
