package archive

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// HasFile reports whether the tar.gz archive r holds a regular file at
// name (a slash-separated path relative to the archive's root, as Pack
// writes them). The server asks it of an uploaded build context, so that
// a missing Dockerfile is refused at once rather than on a node later.
func HasFile(r io.Reader, name string) (bool, error) {
	want := path.Clean(strings.TrimPrefix(name, "./"))
	gz, err := gzip.NewReader(r)
	if err != nil {
		return false, fmt.Errorf("archive: not a tar.gz archive: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("archive: %w", err)
		}
		if h.Typeflag == tar.TypeReg && path.Clean(strings.TrimPrefix(h.Name, "./")) == want {
			return true, nil
		}
	}
}
