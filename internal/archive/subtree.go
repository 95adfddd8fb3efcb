package archive

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
)

// Subtree copies the entries of the gzipped tar r under folder prefix
// into a gzipped tar written to w, the prefix taken off their names: one
// output folder out of a job's outputs archive (each output is a folder
// of it), made an archive of its own for the next step of a pipeline to
// download. It reports whether the folder was in r. Entries are copied,
// not unpacked: Unpack checks them where they land.
func Subtree(w io.Writer, r io.Reader, prefix string) (bool, error) {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" || strings.Contains(prefix, "..") {
		return false, fmt.Errorf("archive: subtree %q is not a folder name", prefix)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return false, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	gz, tw := newWriters(w)
	found := false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return found, err
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		if name == prefix || name == prefix+"/" {
			found = true
			continue
		}
		rest, ok := strings.CutPrefix(name, prefix+"/")
		if !ok || rest == "" {
			continue
		}
		found = true
		h := *hdr
		h.Name = rest
		if err := tw.WriteHeader(&h); err != nil {
			return found, err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return found, err
		}
	}
	return found, closeWriters(gz, tw)
}
