// Package codes is the request service of code assets (Azure's
// codes/{name}/versions: what azure-ai-ml registers for a job's local
// code after uploading its files to workspaceblobstore through Shoal's
// Blob endpoint), on service/versioned like every versioned kind, and
// the resolver that turns a code version into the artifact a job's code
// is: a tar.gz of its files, as the CLI uploads a code folder, so that
// the agent fetches it as it fetches any job's code.
package codes

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"path"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/service/versioned"
	"github.com/shoal-ml/shoal/store"
)

// Service registers code versions.
type Service = versioned.Service[*asset.Code]

// New returns the code versions' service over st: a version is refused
// (path, naming the folder) when its folder holds no blob of the
// workspace, so that no version names code that was never uploaded.
func New(st store.Store) *Service {
	return versioned.New(versioned.Config[*asset.Code]{Store: st, Kind: versioned.Kind[*asset.Code]{
		Normalize: asset.NormalizeCode,
		Same:      asset.SameCode,
		Check: func(c *asset.Code) error {
			container, folder, err := asset.CodeFolder(c.Path)
			if err != nil {
				return err
			}
			var some []*blobs.Blob
			if err := st.View(context.Background(), func(tx store.Tx) (err error) {
				some, err = tx.ListBlobs(c.Workspace, container, folder+"/", "", 1)
				return err
			}); err != nil {
				return err
			}
			if len(some) == 0 {
				return core.FieldErrorf("path", "%s holds no file of workspace %s: upload the code first (azure-ai-ml does, to the SAS of listSecrets or startPendingUpload)", core.Short(c.Path), c.Workspace)
			}
			return nil
		},
	}})
}

// CodeResolver is the method set of arm.CodeResolver (declared by the
// ARM job routes), which Resolver implements: a job's codeId becomes the
// artifact its ranks fetch.
type CodeResolver interface {
	CodeArtifact(ctx context.Context, workspace, codeID string) (artifactID string, err error)
}

var _ CodeResolver = (*Resolver)(nil)

// Putter stores an artifact within the workspace's storage quota.
type Putter func(ctx context.Context, workspace string, r io.Reader, max int64) (string, error)

// Resolver turns a job's code (a code version) into the artifact the
// agent fetches. It implements arm.CodeResolver.
type Resolver struct {
	Store store.Store
	Files store.Files
	Put   Putter
	// Codes reads versions (New's service).
	Codes *Service
}

// MaxCodeBytes bounds the files of one code version that a job fetches:
// the limit of an artifact the CLI uploads.
const MaxCodeBytes = 2 << 30

// epoch is every packed entry's time, so that the same files pack to the
// same artifact.
var epoch = time.Unix(0, 0).UTC()

// CodeArtifact returns the artifact of codeID's files in workspace:
// codeID is a code version's ARM id (…/workspaces/<ws>/codes/<name>/versions/<v>)
// or azureml:<name>:<version>. A code of another workspace, or none, is
// ENOTFOUND naming the code.
func (r *Resolver) CodeArtifact(ctx context.Context, workspace, codeID string) (string, error) {
	name, version, err := parseCodeID(workspace, codeID)
	if err != nil {
		return "", err
	}
	c, err := r.Codes.Get(ctx, workspace, name, version, "")
	if err != nil {
		if core.ErrorCode(err) == core.ENOTFOUND {
			return "", &core.Error{Code: core.ENOTFOUND, Field: "codeId", Message: "code " + name + ":" + version + " is not registered in workspace " + workspace}
		}
		return "", err
	}
	container, folder, err := asset.CodeFolder(c.Path)
	if err != nil {
		return "", err
	}
	list, err := r.all(ctx, c.Workspace, container, folder+"/")
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", core.Errorf(core.ENOTFOUND, "code %s:%s: %s holds no file", name, version, c.Path)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(r.pack(c.Workspace, folder+"/", list, pw)) }()
	id, err := r.Put(ctx, c.Workspace, pr, MaxCodeBytes)
	pr.CloseWithError(io.ErrClosedPipe)
	return id, err
}

// all lists every blob under prefix.
func (r *Resolver) all(ctx context.Context, ws, container, prefix string) ([]*blobs.Blob, error) {
	var out []*blobs.Blob
	marker := ""
	for {
		var page []*blobs.Blob
		if err := r.Store.View(ctx, func(tx store.Tx) (err error) {
			page, err = tx.ListBlobs(ws, container, prefix, marker, 1000)
			return err
		}); err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < 1000 {
			return out, nil
		}
		marker = page[len(page)-1].Name
	}
}

// pack writes the blobs as a gzip'd tar, paths relative to prefix, in
// name order, with zeroed times and owners (the CLI's archive format).
func (r *Resolver) pack(ws, prefix string, list []*blobs.Blob, w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, b := range list {
		rel := strings.TrimPrefix(b.Name, prefix)
		if blobs.CheckName(rel) != nil {
			continue // never a path out of the folder
		}
		for d := path.Dir(rel); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	// Folders first, parents before children, so that an unpacker that
	// refuses implicit folders finds each.
	for _, d := range core.SortedKeys(dirs) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	for _, b := range list {
		rel := strings.TrimPrefix(b.Name, prefix)
		if blobs.CheckName(rel) != nil {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: b.Size, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		rc, err := r.Files.OpenArtifact(ws, b.Artifact)
		if err != nil {
			return err
		}
		_, err = io.CopyN(tw, rc, b.Size)
		rc.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// parseCodeID reads a code reference: an ARM id of workspace's code
// version or azureml:<name>:<version>.
func parseCodeID(workspace, id string) (name, version string, err error) {
	bad := core.FieldErrorf("codeId", "%q is neither a code version's ARM id (…/workspaces/<ws>/codes/<name>/versions/<version>) nor azureml:<name>:<version>", core.Short(id))
	if rest, ok := strings.CutPrefix(id, "azureml:"); ok && !strings.HasPrefix(rest, "/") {
		name, version, ok = strings.Cut(rest, ":")
		if !ok || name == "" || version == "" {
			return "", "", bad
		}
		return name, version, nil
	}
	segs := strings.Split(strings.Trim(strings.TrimPrefix(id, "azureml:"), "/"), "/")
	n := len(segs)
	if n < 6 || !strings.EqualFold(segs[n-4], "codes") || !strings.EqualFold(segs[n-2], "versions") || !strings.EqualFold(segs[n-6], "workspaces") {
		return "", "", bad
	}
	if !strings.EqualFold(segs[n-5], workspace) {
		return "", "", &core.Error{Code: core.ENOTFOUND, Field: "codeId", Message: "code " + segs[n-3] + ":" + segs[n-1] + " is in workspace " + segs[n-5] + ", not " + workspace + ": a job runs the code of its own workspace"}
	}
	return segs[n-3], segs[n-1], nil
}
