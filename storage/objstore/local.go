package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// localSource is a directory mounted at the same place on every node (an
// NFS datastore), confined with os.Root: no key, `..` or symbolic link
// reaches outside it.
type localSource struct {
	root *os.Root
	dir  string
}

// NewLocal returns a Source over the directory dir.
func NewLocal(dir string) (Source, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(ErrNotFound, err, fmt.Sprintf("path %s does not exist on this node", dir))
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, errorf(ErrDenied, err, fmt.Sprintf("path %s: permission denied", dir))
		}
		return nil, errorf(nil, err, fmt.Sprintf("path %s: %v", dir, err))
	}
	return &localSource{root: r, dir: dir}, nil
}

// List walks the directory for regular files under prefix; a symbolic
// link is followed only while it stays inside the directory.
func (s *localSource) List(ctx context.Context, prefix string) ([]Object, error) {
	if err := checkKey(prefix, true); err != nil {
		return nil, err
	}
	start := "."
	if d := strings.TrimSuffix(prefix, "/"); d != "" {
		// Walk from the deepest folder the prefix names in full.
		if strings.HasSuffix(prefix, "/") {
			start = d
		} else if dir := path.Dir(d); dir != "." {
			start = dir
		}
	}
	var out []Object
	fsys := s.root.FS()
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			return nil
		}
		if !strings.HasPrefix(p, prefix) {
			return nil
		}
		info, err := s.root.Stat(p) // follows a link, inside the root only
		if err != nil {
			return errorf(ErrDenied, err, fmt.Sprintf("path %s/%s: %v (a link may not leave the datastore's path)", s.dir, p, unwrapPath(err)))
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		out = append(out, Object{Key: p, Size: info.Size(), ETag: fmt.Sprintf("%d-%d", info.Size(), info.ModTime().UnixNano())})
		return nil
	})
	if err != nil {
		var oe *Error
		if errors.As(err, &oe) {
			return nil, oe
		}
		return nil, errorf(nil, err, fmt.Sprintf("list %s/%s: %v", s.dir, prefix, unwrapPath(err)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Open opens one file inside the directory.
func (s *localSource) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := checkKey(key, false); err != nil {
		return nil, 0, err
	}
	f, err := s.root.Open(key)
	if err != nil {
		return nil, 0, s.fail("open", key, err)
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		f.Close()
		return nil, 0, errorf(ErrNotFound, err, fmt.Sprintf("open %s/%s: not a regular file", s.dir, key))
	}
	return f, info.Size(), nil
}

// Put writes one file inside the directory, through a temporary name so
// that a reader never sees half of it.
func (s *localSource) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkKey(key, false); err != nil {
		return err
	}
	if dir := path.Dir(key); dir != "." {
		// A shared filesystem's folders: readable by the other nodes'
		// jobs that read the datastore, as its files are.
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return s.fail("put", key, err)
		}
	}
	tmp := path.Join(path.Dir(key), "."+path.Base(key)+".partial")
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return s.fail("put", key, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.root.Rename(tmp, key)
	}
	if err != nil {
		s.root.Remove(tmp)
		return s.fail("put", key, err)
	}
	return nil
}

// fail classifies a file error, naming the path without Go's wrapping.
func (s *localSource) fail(op, key string, err error) error {
	var kind error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kind = ErrNotFound
	case errors.Is(err, fs.ErrPermission):
		kind = ErrDenied
	case strings.Contains(err.Error(), "escapes from parent"):
		kind = ErrDenied
	}
	return errorf(kind, err, fmt.Sprintf("%s %s/%s: %v", op, s.dir, key, unwrapPath(err)))
}

// unwrapPath is a path error's cause without the path Go repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkKey refuses a key that is not a plain relative slash path: `..`,
// an absolute path, a backslash or NUL. A prefix may be empty or end in
// a slash.
func checkKey(key string, prefix bool) error {
	k := key
	if prefix {
		if k == "" {
			return nil
		}
		k = strings.TrimSuffix(k, "/")
	}
	if k == "" || strings.ContainsAny(k, "\\\x00") || !fs.ValidPath(k) {
		return errorf(ErrDenied, nil, fmt.Sprintf("key %q: must be a relative path without `..`, `.`, empty segments, backslashes or NUL", key))
	}
	return nil
}
