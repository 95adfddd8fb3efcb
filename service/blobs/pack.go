package blobs

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"path"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/blobs"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
)

// A folder of workspaceblobstore that Azure's clients uploaded blob by
// blob (a code version's files, a data asset's local path) reaches a job
// as one archive, the tar.gz the CLI uploads a folder as: ListAll finds
// its blobs and Pack writes them. Code versions become a job's code
// artifact this way (package codes), and a data asset's upload a job's
// input (service.OpenInputForNode).

// ListAll lists every committed blob of workspace's container under
// prefix, in name order.
func ListAll(ctx context.Context, st store.Store, workspace, container, prefix string) ([]*blobs.Blob, error) {
	var out []*blobs.Blob
	marker := ""
	for {
		var page []*blobs.Blob
		if err := st.View(ctx, func(tx store.Tx) (err error) {
			page, err = tx.ListBlobs(workspace, container, prefix, marker, 1000)
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

// PlaceBlobs lists the blobs a place of container names, for a job's
// input: the one blob named place (a uri_file), or those under place as
// a folder; base is the part of their names the archive leaves out.
func PlaceBlobs(ctx context.Context, st store.Store, workspace, container, place string) (list []*blobs.Blob, base string, err error) {
	folder := strings.TrimSuffix(place, "/") + "/"
	all, err := ListAll(ctx, st, workspace, container, strings.TrimSuffix(place, "/"))
	if err != nil {
		return nil, "", err
	}
	for _, b := range all {
		if b.Name == place && !strings.HasSuffix(place, "/") {
			// A file: the archive holds it alone, by its own name.
			return []*blobs.Blob{b}, path.Dir(place) + "/", nil
		}
		if strings.HasPrefix(b.Name, folder) {
			list = append(list, b)
		}
	}
	return list, folder, nil
}

// epoch is every packed entry's time, so that the same files pack to the
// same artifact.
var epoch = time.Unix(0, 0).UTC()

// Pack writes list as a gzip'd tar, paths relative to base, in name
// order, with zeroed times and owners (the CLI's archive format); the
// bytes come from files. A name that would leave the folder is left out.
func Pack(files store.Files, workspace, base string, list []*blobs.Blob, w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, b := range list {
		rel := strings.TrimPrefix(b.Name, base)
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
		rel := strings.TrimPrefix(b.Name, base)
		if blobs.CheckName(rel) != nil {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: b.Size, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		rc, err := files.OpenArtifact(workspace, b.Artifact)
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
