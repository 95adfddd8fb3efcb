// Package archive packs folders into deterministic tar.gz archives and
// unpacks untrusted ones safely.
//
// Pack is what the CLI uses to snapshot a job's code folder: the server stores
// code content-addressed by the sha256 of the archive (see Digest), so packing
// the same folder twice must give the same bytes. Unpack is what the agent
// uses to materialise that code on a node: it treats the archive as hostile
// and confines every write to the destination folder.
package archive

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"time"
)

// PackOptions tunes Pack.
type PackOptions struct {
	// Ignore honours ignore files the way Azure ML does: in each directory,
	// an .amlignore if present, else a .gitignore, with gitignore pattern
	// semantics (rules of deeper files override those of their parents).
	Ignore bool
	// SameOwner refuses a regular file whose owner is not the folder's:
	// whoever else writes the folder (a job whose outputs an agent running
	// as root packs) cannot have the packer read a file of another's
	// through a hard link to it.
	SameOwner bool
}

// Stats describes what Pack wrote.
type Stats struct {
	Files int   // regular files
	Bytes int64 // their total size
}

// epoch is the modification time written for every entry, so that archives
// depend on content only.
var epoch = time.Unix(0, 0).UTC()

// Pack writes root as a gzip'd tar to w: regular files, directories and
// symlinks (stored as symlinks, their target as is), with slash-separated
// paths relative to root, in lexical order, with zeroed times and owners, so
// identical folders give identical bytes. Permission bits are kept (0o777
// mask). A ".git" file or directory is always skipped, at any depth; other
// special files (sockets, fifos, devices) are skipped too.
func Pack(w io.Writer, root string, opts PackOptions) (Stats, error) {
	var st Stats
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return st, fmt.Errorf("archive: pack %s: %w", root, err)
	}
	if fi, err := os.Stat(real); err != nil {
		return st, fmt.Errorf("archive: pack %s: %w", root, err)
	} else if !fi.IsDir() {
		return st, fmt.Errorf("archive: pack %s: not a directory", root)
	}
	var ign *ignorer
	if opts.Ignore {
		ign = &ignorer{}
	}
	// Files are opened through a Root at the folder, without following a
	// link at the end of their path or out of the folder: whoever else can
	// write the folder (a job's outputs, packed by an agent running as
	// root) cannot swap a file for a link to one the packer alone may
	// read.
	top, err := os.OpenRoot(real)
	if err != nil {
		return st, fmt.Errorf("archive: pack %s: %w", root, err)
	}
	defer top.Close()
	owner := -1
	if opts.SameOwner {
		fi, err := top.Stat(".")
		if err != nil {
			return st, fmt.Errorf("archive: pack %s: %w", root, err)
		}
		owner = int(fi.Sys().(*syscall.Stat_t).Uid)
	}
	gz, tw := newWriters(w)
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(real, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return loadIgnore(ign, p, "")
		}
		if d.Name() == ".git" {
			return skip(d)
		}
		if ign.excluded(rel, d.IsDir()) {
			return skip(d)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode().IsDir():
			if err := tw.WriteHeader(header(rel+"/", tar.TypeDir, fi, "", 0)); err != nil {
				return err
			}
			return loadIgnore(ign, p, rel)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return tw.WriteHeader(header(rel, tar.TypeSymlink, fi, target, 0))
		case fi.Mode().IsRegular():
			f, err := top.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
			if err != nil {
				return err
			}
			if owner >= 0 {
				if fi, err := f.Stat(); err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != owner {
					f.Close()
					return fmt.Errorf("%s: not the folder owner's file (a hard link to another's?): refused", rel)
				}
			}
			n, err := writeOpenFile(tw, f, p, rel)
			f.Close()
			if err != nil {
				return err
			}
			st.Files++
			st.Bytes += n
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("archive: pack %s: %w", root, err)
	}
	if err := closeWriters(gz, tw); err != nil {
		return st, fmt.Errorf("archive: pack %s: %w", root, err)
	}
	return st, nil
}

// PackFile writes an archive holding the single regular file at p, under
// its base name.
func PackFile(w io.Writer, p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("archive: pack %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("archive: pack %s: not a regular file", p)
	}
	gz, tw := newWriters(w)
	if _, err := writeFile(tw, p, filepath.Base(p)); err != nil {
		return fmt.Errorf("archive: pack %s: %w", p, err)
	}
	if err := closeWriters(gz, tw); err != nil {
		return fmt.Errorf("archive: pack %s: %w", p, err)
	}
	return nil
}

// Digest returns the content address of an archive: "sha256:<hex>".
func Digest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("archive: digest: %w", err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func newWriters(w io.Writer) (*gzip.Writer, *tar.Writer) {
	// gzip.NewWriter leaves the header's name and mtime empty: deterministic.
	gz := gzip.NewWriter(w)
	return gz, tar.NewWriter(gz)
}

func closeWriters(gz *gzip.Writer, tw *tar.Writer) error {
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return filepath.SkipDir
	}
	return nil
}

// loadIgnore reads the ignore file of directory dir (rel to the root), if
// any: .amlignore wins over .gitignore.
func loadIgnore(ign *ignorer, dir, rel string) error {
	if ign == nil {
		return nil
	}
	for _, name := range []string{amlIgnoreName, gitIgnoreName} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		ign.add(rel, string(b))
		return nil
	}
	return nil
}

func header(name string, typ byte, fi fs.FileInfo, link string, size int64) *tar.Header {
	return &tar.Header{
		Typeflag: typ,
		Name:     name,
		Linkname: link,
		Size:     size,
		Mode:     int64(fi.Mode().Perm()),
		ModTime:  epoch,
		Format:   tar.FormatPAX, // long names and links; no times or owners are recorded
	}
}

// writeFile writes the regular file at p as entry name, with the size it has
// once opened; a file that changes size while being read is an error rather
// than a corrupt archive.
func writeFile(tw *tar.Writer, p, name string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return writeOpenFile(tw, f, p, name)
}

// writeOpenFile writes the open file f (found at p) as name; anything but
// a regular file is refused.
func writeOpenFile(tw *tar.Writer, f *os.File, p, name string) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s: not a regular file", p)
	}
	if err := tw.WriteHeader(header(path.Clean(name), tar.TypeReg, fi, "", fi.Size())); err != nil {
		return 0, err
	}
	n, err := io.CopyN(tw, f, fi.Size())
	if err != nil {
		if errors.Is(err, io.EOF) {
			return n, fmt.Errorf("%s: file shrank while being packed", p)
		}
		return n, err
	}
	return n, nil
}
