package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/postgres"
)

// filesDir is where a SQLite store's files are: beside its database.
func filesDir(sqliteURL string) string {
	return filepath.Join(filepath.Dir(strings.TrimPrefix(sqliteURL, "sqlite://")), "files")
}

// copyFiles moves the files along with the store: from a SQLite
// installation's files/ into PostgreSQL, or out of PostgreSQL into the
// new SQLite file's files/. Between two stores of one kind there is
// nothing to do here (two SQLite stores: copy the directory; two
// PostgreSQL databases: the rows of file_chunks — see docs/operations/backup.md).
// Returns how many files moved.
func copyFiles(ctx context.Context, src, dst store.Store, srcURL, dstURL string) (int, error) {
	spg, srcPG := src.(*postgres.DB)
	dpg, dstPG := dst.(*postgres.DB)
	switch {
	case !srcPG && dstPG:
		root := filesDir(srcURL)
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipDir // an installation that never stored a file
			}
			if err != nil || d.IsDir() {
				return err
			}
			key, _ := filepath.Rel(root, p)
			key = filepath.ToSlash(key)
			// Uploads under way: artifacts/.tmp/ now, artifacts/tmp/upload-*
			// before artifacts were kept per workspace (a workspace named
			// "tmp" keeps its artifacts in artifacts/tmp/ too).
			if strings.HasPrefix(key, "artifacts/.tmp/") || strings.HasPrefix(key, "artifacts/tmp/upload-") || strings.HasSuffix(key, ".tmp") {
				return nil // an upload under way when the copy began
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := dpg.Files().Import(key, f); err != nil {
				return fmt.Errorf("file %s: %w", key, err)
			}
			n++
			return nil
		})
		return n, err
	case srcPG && !dstPG:
		root := filesDir(dstURL)
		keys, err := spg.Files().Keys(ctx)
		if err != nil {
			return 0, err
		}
		for i, key := range keys {
			if err := exportFile(spg.Files(), key, filepath.Join(root, filepath.FromSlash(key))); err != nil {
				return i, fmt.Errorf("file %s: %w", key, err)
			}
		}
		return len(keys), nil
	}
	return 0, nil
}

// exportFile writes the file under key to path.
func exportFile(f *postgres.Files, key, path string) error {
	r, err := f.Open(key)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
