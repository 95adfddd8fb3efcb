package storage_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/storage"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
)

// newStorage returns the storage service over a test store (holding the
// workspace "ws", with the quota given) and a file store in a temp dir.
func newStorage(t *testing.T, quota int64) (*storage.Service, *filestore.Store) {
	t.Helper()
	db, _ := teststore.Open(t)
	if err := db.Update(context.Background(), func(tx store.Tx) error {
		return tx.PutWorkspaceLimits("ws", money.WorkspaceLimits{StorageQuotaBytes: quota})
	}); err != nil {
		t.Fatal(err)
	}
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	return storage.New(storage.Config{Store: db, Files: files}), files
}

// An upload is held to the workspace's quota on its own, without the
// rest of the services: within it, it is stored; past it, refused with
// EQUOTA on storage_quota, and a full workspace refuses even one byte.
func TestPutArtifactWithinTheQuota(t *testing.T) {
	s, files := newStorage(t, 1000)
	ctx := context.Background()
	if _, err := s.PutArtifact(ctx, "ws", bytes.NewReader(bytes.Repeat([]byte("a"), 600)), 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutArtifact(ctx, "ws", bytes.NewReader(bytes.Repeat([]byte("b"), 600)), 1<<20); core.ErrorCode(err) != core.EQUOTA || !strings.Contains(err.Error(), "storage_quota") {
		t.Fatalf("an upload past the quota: %v; want EQUOTA on storage_quota", err)
	}
	if used, err := files.Usage("ws"); err != nil || used != 600 {
		t.Fatalf("usage %d (%v) after a refused upload; want 600", used, err)
	}
	if _, err := s.PutArtifact(ctx, "ws", bytes.NewReader(bytes.Repeat([]byte("c"), 400)), 1<<20); err != nil {
		t.Fatalf("an upload of the 400 bytes left: %v", err)
	}
	if _, err := s.PutArtifact(ctx, "ws", strings.NewReader(""), 1<<20); core.ErrorCode(err) != core.EQUOTA {
		t.Fatalf("an upload into a full workspace: %v; want EQUOTA", err)
	}
}

// A log write past the quota keeps what fits and ends the log with the
// quota's marker once; past its cap, the log ends with the cap's marker.
func TestWriteCappedLog(t *testing.T) {
	s, files := newStorage(t, 1000)
	log := store.LogFile{
		Workspace: "ws",
		Write:     func(off int64, data []byte) error { return files.WriteLog("ws", "j", 1, 0, off, data) },
		Open:      func() (io.ReadSeekCloser, error) { return files.OpenLog("ws", "j", 1, 0) },
	}
	read := func() string {
		t.Helper()
		f, err := log.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		return string(b)
	}
	quota := money.WorkspaceLimits{StorageQuotaBytes: 1000}
	for _, off := range []int64{0, 600, 600} { // the last one retried
		if err := s.WriteCappedLog(quota, log, off, bytes.Repeat([]byte("a"), 600)); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	if got, want := read(), strings.Repeat("a", 1000)+money.LogQuotaMarker(1000); got != want {
		t.Fatalf("log cut at the quota: %q, want %q", got, want)
	}

	s, files = newStorage(t, 1<<20)
	capped := money.WorkspaceLimits{MaxLogBytes: 100}
	if err := s.WriteCappedLog(capped, log, 0, bytes.Repeat([]byte("b"), 150)); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), strings.Repeat("b", 100)+money.LogCutMarker(100); got != want {
		t.Fatalf("log cut at its cap: %q, want %q", got, want)
	}
}
