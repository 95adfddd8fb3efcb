package sealing_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/sealing"
)

func TestKeyFileIsCreatedPrivateAndReusedAndSealsByContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "workload.key")
	k, err := sealing.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want mode %04o", p, fi.Mode(), err, want)
		}
	}
	s, err := k.Seal([]byte("-----BEGIN PRIVATE KEY-----"), "kid-1")
	if err != nil || !sealing.IsSealed(s) || strings.Contains(s, "PRIVATE") {
		t.Fatalf("sealed %q %v", s, err)
	}
	again, err := sealing.LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := again.Open(s, "kid-1"); err != nil || string(b) != "-----BEGIN PRIVATE KEY-----" {
		t.Fatalf("opened with the reloaded key: %q %v", b, err)
	}
	if _, err := again.Open(s, "kid-2"); err == nil {
		t.Fatal("a value sealed for one record opened for another")
	}
	other, err := sealing.LoadOrCreate(filepath.Join(t.TempDir(), "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Open(s, "kid-1"); err != sealing.ErrWrongKey {
		t.Fatalf("opened with another key: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sealing.LoadOrCreate(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key file others can read: %v", err)
	}
}
