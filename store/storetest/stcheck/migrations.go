package stcheck

import (
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

// MigrationsUpTo returns fsys's migrations/NNNN_*.sql files up to
// version last, so that a test can build a store as an older Shoal left
// it.
func MigrationsUpTo(t *testing.T, fsys fs.FS, last int) fs.FS {
	t.Helper()
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.Atoi(prefix); err != nil || v > last {
			continue
		}
		b, err := fs.ReadFile(fsys, "migrations/"+e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out["migrations/"+e.Name()] = &fstest.MapFile{Data: b}
	}
	return out
}
