// Package codes is the request service of code assets (Azure's
// codes/{name}/versions: what azure-ai-ml registers for a job's local
// code after uploading its files to workspaceblobstore through Shoal's
// Blob endpoint), on service/versioned like every versioned kind, and
// the resolver that turns a code version into the artifact a job's code
// is: a tar.gz of its files, as the CLI uploads a code folder, so that
// the agent fetches it as it fetches any job's code.
package codes

import (
	"context"
	"io"
	"strings"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
	sblobs "github.com/shoal-ml/shoal/service/blobs"
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
	list, err := sblobs.ListAll(ctx, r.Store, c.Workspace, container, folder+"/")
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", core.Errorf(core.ENOTFOUND, "code %s:%s: %s holds no file", name, version, c.Path)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(sblobs.Pack(r.Files, c.Workspace, folder+"/", list, pw)) }()
	id, err := r.Put(ctx, c.Workspace, pr, MaxCodeBytes)
	pr.CloseWithError(io.ErrClosedPipe)
	return id, err
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
