package sqlite_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/testenv"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest"
)

// On a full disk a change fails with storage_full and changes nothing;
// what was stored before stays readable, and once space is freed the
// same change goes through. The store lives on a small tmpfs of its own,
// which needs root (mount); elsewhere the test says so and skips (fails
// under SHOAL_TEST_REQUIRE_ALL).
func TestFullDiskRefusesChangesAndKeepsData(t *testing.T) {
	dir := t.TempDir()
	testenv.Require(t, "a tmpfs of its own to fill (mount needs root)", func() error {
		return syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m")
	}, "run the tests as root")
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	db := open(t, filepath.Join(dir, "shoal.db"), storetest.NewClock(storetest.Start))
	defer db.Close()
	put := func(k string) error {
		return db.Update(t.Context(), func(tx store.Tx) error {
			// A value large enough that the WAL must grow to hold it.
			return tx.PutSetting(k, strings.Repeat("x", 256<<10))
		})
	}
	if err := put("before"); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 64<<10); ; {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	err = put("during")
	if core.ErrorCode(err) != core.ESTORAGEFULL || !strings.Contains(core.ErrorMessage(err), "disk is full") {
		t.Fatalf("a change on a full disk: %v, want a storage_full error naming the full disk", err)
	}
	os.Remove(filler)
	err = db.View(t.Context(), func(tx store.Tx) error {
		if _, err := tx.GetSetting("during"); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("the refused change was stored: %v", err)
		}
		_, err := tx.GetSetting("before")
		return err
	})
	if err != nil {
		t.Fatalf("what was stored before the disk filled: %v", err)
	}
	if err := put("after"); err != nil {
		t.Fatalf("a change once space was freed: %v", err)
	}
}
