// Package sqlitetest gives tests SQLite stores that start migrated. For
// tests only.
//
// Tests open hundreds of stores, and applying every migration to each new
// file was about a third of the CPU of package service's tests under the
// race detector (a test command bound by CPU on 2 cores). The
// migrations themselves are tested where they are written: package
// store/sqlite's tests open fresh files.
package sqlitetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shoal-ml/shoal/store/sqlite"
)

var (
	once     sync.Once
	template []byte
	errMade  error
)

// Path writes, at dir/name, a copy of a store file with every migration
// applied, made once per test process, and returns its path: sqlite.Open
// on it finds nothing to migrate.
func Path(t testing.TB, dir, name string) string {
	t.Helper()
	once.Do(func() { template, errMade = makeTemplate() })
	if errMade != nil {
		t.Fatalf("sqlitetest: %v", errMade)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, template, 0o600); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	return path
}

// makeTemplate migrates a store in a temporary folder, closes it (SQLite
// moves its write-ahead log into the file) and reads the file.
func makeTemplate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "shoal-sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	db, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("the template's write-ahead log kept %d bytes after close", fi.Size())
	}
	return os.ReadFile(path)
}
