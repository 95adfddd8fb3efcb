package blobs

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/jobdata"
)

// Read-only views: what Shoal already keeps of jobs, read as the blobs
// Azure's clients expect where Azure keeps them: a job's named output on
// workspaceblobstore under azureml/<job>/<output>/ and its artifacts on
// workspaceartifactstore under ExperimentRun/dcid.<job>/. Which path is
// which job's what is jobdata.ShoalSource's mapping, the one a job's
// input of such a path is fetched by. Their blobs are the files of the
// output's archive, listed and read from it; nothing is copied.

// OutputOpener opens a job's kept output as a tar.gz of its folder
// (service.Services.OpenJobOutputs of rank 0, adapted by the caller).
type OutputOpener func(ctx context.Context, workspace, job, output string) (io.ReadCloser, error)

// view is the kept output a blob name falls in, and the name's path in
// it ("" for the whole output).
type view struct {
	src *node.DataSource
	// base is the names' part before the output's files
	// (azureml/<job>/<output>/).
	base string
}

// viewOf returns the view name falls in, or nil when it is no view
// (an upload of the container's own).
func viewOf(container, name string) *view {
	src, err := jobdata.ShoalSource(container, asset.DataURI{Kind: asset.URIDatastore, Datastore: container, Path: name, Raw: name})
	if err != nil || src.OutputOf == "" {
		return nil
	}
	// The output's folder: azureml/<job>/<output>/ or
	// ExperimentRun/dcid.<job>/, whether or not name ends there.
	n := 3
	if !Writable(container) {
		n = 2
	}
	return &view{src: src, base: strings.Join(strings.SplitN(name, "/", n+1)[:n], "/") + "/"}
}

// IsView reports whether a blob name of container is in a read-only
// view: writes there are refused.
func IsView(container, name string) bool {
	if !Writable(container) {
		return true
	}
	segs := strings.SplitN(name, "/", 4)
	return len(segs) >= 3 && segs[0] == "azureml"
}

// viewError turns a failure to open a kept output into the blob
// protocol's answer: what is not (yet) kept is BlobNotFound.
func viewError(err error) error {
	if core.ErrorCode(err) == core.ENOTFOUND || core.ErrorCode(err) == core.EINVALID {
		return fail(http.StatusNotFound, "BlobNotFound", "%s", core.ErrorMessage(err))
	}
	return err
}

// walkView reads v's output archive and calls fn for each regular file,
// with a reader of its content, until fn returns false.
func (s *Service) walkView(ctx context.Context, ws string, v *view, fn func(h *tar.Header, r io.Reader) bool) error {
	if s.outputs == nil {
		return fail(http.StatusNotFound, "BlobNotFound", "this server serves no job outputs as blobs")
	}
	rc, err := s.outputs(ctx, ws, v.src.OutputOf, v.src.Output)
	if err != nil {
		return viewError(err)
	}
	defer rc.Close()
	gz, err := gzip.NewReader(rc)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		// An entry whose name is no path inside the container is no
		// blob: the archive is the job's own, and a client downloading
		// the folder writes each name under its destination.
		if h.Typeflag != tar.TypeReg || blobs.CheckName(v.base+strings.TrimPrefix(h.Name, "./")) != nil {
			continue
		}
		if !fn(h, tr) {
			return nil
		}
	}
}

// viewBlob is an archive entry as a blob of the view.
func viewBlob(ws, container string, v *view, h *tar.Header) *blobs.Blob {
	name := v.base + strings.TrimPrefix(h.Name, "./")
	t := h.ModTime.UTC()
	if t.Before(time.Unix(1, 0)) {
		t = time.Unix(0, 0).UTC()
	}
	return &blobs.Blob{Workspace: ws, Container: strings.ToLower(container), Name: name, Size: h.Size,
		ContentType: "application/octet-stream", ETag: newETag(v.src.OutputOf, v.src.Output, name), Created: t, Modified: t}
}

// openView opens one file of a view: its blob and its content (nil
// when head), read from the output's archive in one pass.
func (s *Service) openView(ctx context.Context, ws, container, name string, v *view, head bool) (*blobs.Blob, io.ReadCloser, error) {
	want := strings.TrimPrefix(name, v.base)
	if want == "" {
		return nil, nil, fail(http.StatusNotFound, "BlobNotFound", "the specified blob does not exist")
	}
	type result struct {
		h   *tar.Header
		err error
	}
	found := make(chan result, 1)
	pr, pw := io.Pipe()
	go func() {
		sent := false
		err := s.walkView(ctx, ws, v, func(h *tar.Header, r io.Reader) bool {
			if strings.TrimPrefix(h.Name, "./") != want {
				return true
			}
			sent = true
			found <- result{h: h}
			if !head {
				_, err := io.CopyN(pw, r, h.Size)
				pw.CloseWithError(err)
			}
			return false
		})
		if !sent {
			if err == nil {
				err = fail(http.StatusNotFound, "BlobNotFound", "the specified blob does not exist")
			}
			found <- result{err: err}
		}
		pw.CloseWithError(err)
	}()
	res := <-found
	if res.err != nil {
		pr.Close()
		return nil, nil, res.err
	}
	b := viewBlob(ws, container, v, res.h)
	if head {
		pr.Close()
		return b, nil, nil
	}
	return b, pr, nil
}

// listView lists a view's files under prefix after marker, up to max.
func (s *Service) listView(ctx context.Context, ws, container, prefix, marker string, max int, v *view) ([]*blobs.Blob, string, error) {
	var all []*blobs.Blob
	err := s.walkView(ctx, ws, v, func(h *tar.Header, _ io.Reader) bool {
		b := viewBlob(ws, container, v, h)
		if strings.HasPrefix(b.Name, prefix) && b.Name > marker {
			all = append(all, b)
		}
		return true
	})
	var be *Error
	if errors.As(err, &be) && be.Code == "BlobNotFound" {
		return []*blobs.Blob{}, "", nil // nothing kept (yet): an empty list
	}
	if err != nil {
		return nil, "", err
	}
	sortBlobs(all)
	next := ""
	if len(all) > max {
		all = all[:max]
		next = all[max-1].Name
	}
	return all, next, nil
}

// sortBlobs orders blobs by name, in byte order.
func sortBlobs(l []*blobs.Blob) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].Name < l[j-1].Name; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}
