package archive

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Default limits of Unpack, used where a Limits field is zero or negative.
const (
	DefaultMaxFiles       = 100_000
	DefaultMaxBytes int64 = 10 << 30 // 10 GiB
)

// Limits bound what Unpack writes, against tar bombs.
type Limits struct {
	MaxFiles int   // entries of any kind
	MaxBytes int64 // total size of regular files
}

// Errors wrapped by Unpack, for errors.Is.
var (
	// ErrUnsafe marks an entry refused because it could write or point
	// outside the destination, or is of a refused kind (hard link, device,
	// fifo, unknown type).
	ErrUnsafe = errors.New("unsafe archive entry")
	// ErrLimit marks an archive exceeding its Limits.
	ErrLimit = errors.New("archive exceeds limits")
)

// maxLinkHops bounds symlink resolution, as the kernel's ELOOP does.
const maxLinkHops = 40

var errLoop = errors.New("too many levels of symbolic links")

// Unpack extracts the tar.gz read from r into dest, creating dest if
// missing. The archive is untrusted: Unpack refuses, with an error naming
// the entry and wrapping ErrUnsafe,
//
//   - absolute paths and paths whose ".." components escape dest;
//   - entries whose parent directory, once symlinks are resolved, lies
//     outside dest (an archive holding "link -> /etc" then "link/passwd");
//   - symlinks whose target is absolute or resolves outside dest, including
//     through other symlinks, checked again once every entry is written (a
//     later entry could otherwise change where an earlier link points);
//   - hard links, character and block devices, fifos and unknown types;
//
// and it stops, wrapping ErrLimit, once the archive holds more entries or
// more bytes of file content than limits allow. All writes go through an
// os.Root opened on dest, which refuses to follow a symlink out of it,
// whatever the checks above missed. Permission bits are kept (0o777 mask: no
// setuid, setgid or sticky bits; directories keep owner rwx so the tree can
// be removed); owners and times are not.
//
// On error dest may hold part of the archive: callers extract into a fresh
// directory and remove it on failure.
func Unpack(r io.Reader, dest string, limits Limits) error {
	if limits.MaxFiles <= 0 {
		limits.MaxFiles = DefaultMaxFiles
	}
	if limits.MaxBytes <= 0 {
		limits.MaxBytes = DefaultMaxBytes
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("archive: unpack: %w", err)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		return fmt.Errorf("archive: unpack: %w", err)
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("archive: unpack: %w", err)
	}
	defer gz.Close()

	u := &unpacker{root: root, limits: limits, links: map[string]bool{}, dirModes: map[string]fs.FileMode{}}
	if err := u.entries(tar.NewReader(gz)); err != nil {
		// Even a partial extraction must not leave an escaping link behind.
		_ = u.recheckLinks()
		return err
	}
	if err := u.recheckLinks(); err != nil {
		return err
	}
	// Read what follows the tar end marker (padding), so that gzip checks
	// its CRC: a corrupt archive is an error, not a silent success.
	if n, err := io.Copy(io.Discard, io.LimitReader(gz, maxTrailer+1)); err != nil {
		return fmt.Errorf("archive: unpack: %w", err)
	} else if n > maxTrailer {
		return fmt.Errorf("archive: unpack: more than %d bytes after the end of the tar stream: %w", maxTrailer, ErrLimit)
	}
	return u.applyDirModes()
}

// maxTrailer bounds the padding read after the tar stream ends.
const maxTrailer = 1 << 20

func (u *unpacker) entries(tr *tar.Reader) error {
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("archive: unpack: %w", err)
		}
		if err := u.entry(hdr, tr); err != nil {
			return err
		}
	}
}

type unpacker struct {
	root     *os.Root
	limits   Limits
	files    int
	bytes    int64
	links    map[string]bool        // symlinks created, to check once all entries are written
	dirModes map[string]fs.FileMode // final modes of directories, applied last
}

func unsafeErr(name, format string, args ...any) error {
	return fmt.Errorf("archive: entry %q: %s: %w", name, fmt.Sprintf(format, args...), ErrUnsafe)
}

func (u *unpacker) entry(hdr *tar.Header, r io.Reader) error {
	name := hdr.Name
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader:
		return nil // metadata for the entries that follow, e.g. from git archive
	case tar.TypeLink:
		return unsafeErr(name, "hard links are refused")
	case tar.TypeChar, tar.TypeBlock:
		return unsafeErr(name, "device files are refused")
	case tar.TypeFifo:
		return unsafeErr(name, "fifos are refused")
	case tar.TypeReg, tar.TypeRegA, tar.TypeDir, tar.TypeSymlink:
	default:
		return unsafeErr(name, "entry type %q is refused", hdr.Typeflag)
	}

	u.files++
	if u.files > u.limits.MaxFiles {
		return fmt.Errorf("archive: entry %q: more than %d entries: %w", name, u.limits.MaxFiles, ErrLimit)
	}

	rel, err := localPath(name)
	if err != nil {
		return err
	}
	if rel == "." {
		if hdr.Typeflag != tar.TypeDir {
			return unsafeErr(name, "only a directory may be named after the destination itself")
		}
		return nil
	}
	// The parent, once symlinks are resolved, must stay inside dest.
	parent, err := resolve(u.root, nil, path.Dir(rel))
	if errors.Is(err, errEscape) {
		return unsafeErr(name, "path passes through a symlink leading outside the destination")
	}
	if err != nil {
		return unsafeErr(name, "parent directory: %v", err)
	}
	// From here on name the entry by its resolved path, which has no
	// symlink in it (but for parts that do not exist yet).
	base := path.Base(rel)
	target := path.Join(append(slices.Clone(parent), base)...)

	switch hdr.Typeflag {
	case tar.TypeDir:
		// The owner keeps rwx so the tree can be cleaned up by whoever
		// unpacked it.
		return u.dir(name, target, fs.FileMode(hdr.Mode).Perm()|0o700)
	case tar.TypeSymlink:
		return u.symlink(name, target, parent, hdr.Linkname)
	default:
		return u.file(name, target, fs.FileMode(hdr.Mode).Perm(), hdr.Size, r)
	}
}

// localPath checks that an entry name is relative and stays inside the
// destination, and returns it cleaned.
func localPath(name string) (string, error) {
	if name == "" {
		return "", unsafeErr(name, "empty name")
	}
	if strings.ContainsRune(name, 0) {
		return "", unsafeErr(name, "NUL in name")
	}
	if strings.HasPrefix(name, "/") || filepath.IsAbs(name) {
		return "", unsafeErr(name, "absolute path")
	}
	rel := path.Clean(name)
	if rel == ".." || strings.HasPrefix(rel, "../") || !filepath.IsLocal(rel) {
		return "", unsafeErr(name, "path escapes the destination")
	}
	return rel, nil
}

// prepare makes sure the parent of target exists and nothing but possibly a
// directory sits at target; it reports whether a directory is already there.
func (u *unpacker) prepare(name, target string) (isDir bool, err error) {
	if dir := path.Dir(target); dir != "." {
		if err := u.root.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("archive: entry %q: %w", name, err)
		}
	}
	fi, err := u.root.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("archive: entry %q: %w", name, err)
	case fi.IsDir():
		return true, nil
	}
	// A later entry replaces an earlier one (or a file already in dest), as
	// tar does; a symlink is removed, never written through.
	if err := u.root.Remove(target); err != nil {
		return false, fmt.Errorf("archive: entry %q: %w", name, err)
	}
	delete(u.links, target)
	return false, nil
}

func (u *unpacker) dir(name, target string, mode fs.FileMode) error {
	isDir, err := u.prepare(name, target)
	if err != nil {
		return err
	}
	if !isDir {
		// Owner rwx while unpacking, so entries can be written inside even
		// when the final mode is read-only.
		if err := u.root.Mkdir(target, 0o700); err != nil {
			return fmt.Errorf("archive: entry %q: %w", name, err)
		}
	}
	u.dirModes[target] = mode
	return nil
}

func (u *unpacker) symlink(name, target string, parent []string, link string) error {
	if link == "" {
		return unsafeErr(name, "empty symlink target")
	}
	if strings.ContainsRune(link, 0) {
		return unsafeErr(name, "NUL in symlink target")
	}
	if path.IsAbs(link) {
		return unsafeErr(name, "absolute symlink target %q", link)
	}
	if _, err := resolve(u.root, parent, link); err != nil && !errors.Is(err, errLoop) {
		return unsafeErr(name, "symlink target %q resolves outside the destination", link)
	}
	isDir, err := u.prepare(name, target)
	if err != nil {
		return err
	}
	if isDir {
		return fmt.Errorf("archive: entry %q: a directory exists at this path", name)
	}
	if err := u.root.Symlink(link, target); err != nil {
		return fmt.Errorf("archive: entry %q: %w", name, err)
	}
	u.links[target] = true
	return nil
}

func (u *unpacker) file(name, target string, mode fs.FileMode, size int64, r io.Reader) error {
	if size < 0 {
		return unsafeErr(name, "negative size")
	}
	if size > u.limits.MaxBytes-u.bytes {
		return fmt.Errorf("archive: entry %q: more than %d bytes of content: %w", name, u.limits.MaxBytes, ErrLimit)
	}
	u.bytes += size
	isDir, err := u.prepare(name, target)
	if err != nil {
		return err
	}
	if isDir {
		return fmt.Errorf("archive: entry %q: a directory exists at this path", name)
	}
	// O_EXCL: prepare removed whatever was there, so a symlink raced in is
	// an error, not a redirection.
	f, err := u.root.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("archive: entry %q: %w", name, err)
	}
	n, err := io.CopyN(f, r, size)
	if err == nil {
		err = f.Chmod(mode) // exact bits, whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("truncated after %d of %d bytes", n, size)
		}
		return fmt.Errorf("archive: entry %q: %w", name, err)
	}
	return nil
}

// recheckLinks resolves every symlink written once the whole archive is out:
// a link checked when written can be redirected by a later entry (a link
// "l -> x/.." written before "x -> ."), so each one is checked against the
// final tree, and an escaping one is removed.
func (u *unpacker) recheckLinks() error {
	var first error
	for _, l := range slices.Sorted(maps.Keys(u.links)) {
		target, err := u.root.Readlink(l)
		if err != nil {
			if first == nil {
				first = fmt.Errorf("archive: symlink %q: %w", l, err)
			}
			continue
		}
		parent, err := resolve(u.root, nil, path.Dir(l))
		if err == nil {
			_, err = resolve(u.root, parent, target)
		}
		if err != nil && !errors.Is(err, errLoop) {
			_ = u.root.Remove(l)
			if first == nil {
				first = unsafeErr(l, "symlink target %q resolves outside the destination once unpacked", target)
			}
		}
	}
	return first
}

// applyDirModes gives directories their archived modes, deepest first so a
// read-only directory does not block its children's.
func (u *unpacker) applyDirModes() error {
	dirs := make([]string, 0, len(u.dirModes))
	for d := range u.dirModes {
		dirs = append(dirs, d)
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range dirs {
		fi, err := u.root.Lstat(d)
		if err != nil || !fi.IsDir() {
			continue // replaced by a later entry
		}
		if err := u.root.Chmod(d, u.dirModes[d]); err != nil {
			return fmt.Errorf("archive: entry %q: %w", d, err)
		}
	}
	return nil
}

var errEscape = errors.New("escapes the destination")

// resolve walks rel from the directory start (resolved components relative
// to the root, nil for the root) the way the kernel would, following the
// symlinks found inside the root, and returns the resolved components. It
// fails with errEscape as soon as ".." or an absolute symlink would leave
// the root, and with errLoop after maxLinkHops symlinks. Components that do
// not exist are taken lexically.
func resolve(root *os.Root, start []string, rel string) ([]string, error) {
	stack := slices.Clone(start)
	todo := splitPath(rel)
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(stack) == 0 {
				return nil, errEscape
			}
			stack = stack[:len(stack)-1]
			continue
		}
		next := append(slices.Clone(stack), c)
		p := path.Join(next...)
		fi, err := root.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			stack = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			return nil, errLoop
		}
		link, err := root.Readlink(p)
		if err != nil {
			return nil, err
		}
		if path.IsAbs(link) {
			return nil, errEscape
		}
		todo = append(splitPath(link), todo...)
	}
	return stack, nil
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
