package filestore

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// UsageDirs are the folders (keys' prefixes) whose files count against a
// workspace's storage quota: its artifacts and its jobs' outputs. Logs
// have their own cap per rank; instances' setup logs are small.
func UsageDirs(workspace string) ([]string, error) {
	if err := checkName("workspace", workspace); err != nil {
		return nil, err
	}
	ws := strings.ToLower(workspace)
	return []string{path.Join("artifacts", ws), path.Join("outputs", ws)}, nil
}

// Usage returns the bytes a workspace's artifacts and outputs take. It
// walks the workspace's folders: a cost per upload, not per request.
func (s *Store) Usage(workspace string) (int64, error) {
	dirs, err := UsageDirs(workspace)
	if err != nil {
		return 0, err
	}
	var total int64
	fsys := s.root.FS()
	for _, dir := range dirs {
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // a file removed meanwhile, or no folder yet
				}
				return err
			}
			if d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					total += fi.Size()
				}
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}
