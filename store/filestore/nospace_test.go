package filestore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/store/filestore"
)

// A log written to a full disk fails with storage_full (which agents
// retry), and the same write succeeds once space is freed. The store
// lives on a small tmpfs of its own, which needs root (mount); elsewhere
// the test says so and skips (fails under SHOAL_TEST_REQUIRE_ALL).
func TestFullDiskIsStorageFull(t *testing.T) {
	dir := t.TempDir()
	testenv.Require(t, "a tmpfs of its own to fill (mount needs root)", func() error {
		return syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m")
	}, "run the tests as root")
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	fs, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	filler := filepath.Join(dir, "filler")
	f, _ := os.Create(filler)
	for chunk := make([]byte, 4096); ; {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	data := make([]byte, 64<<10)
	if err := fs.WriteLog("ws", "job", 1, 0, 0, data); core.ErrorCode(err) != core.ESTORAGEFULL {
		t.Fatalf("a log written to a full disk: %v, want storage_full", err)
	}
	os.Remove(filler)
	if err := fs.WriteLog("ws", "job", 1, 0, 0, data); err != nil {
		t.Fatalf("the same write once space was freed: %v", err)
	}
}
