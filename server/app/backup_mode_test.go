package app

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A backup holds every hash and sealed key of the store: it is written
// 0600 even under a permissive umask, and so is a data dir's content
// after a start (the dir 0700).
func TestBackupAndDataDirArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	s, _, err := openStore(t.Context(), "sqlite://"+src, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	syscall.Umask(0o022)
	dst := filepath.Join(dir, "backup.db")
	if _, err := CopyStore(t.Context(), "sqlite://"+src, "sqlite://"+dst, false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v (%v), want 0600", fi.Mode(), err)
	}

	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "tls"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"shoal.db", "admin.token", "tls/ca.pem"} {
		if err := os.WriteFile(filepath.Join(data, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := secureDataDir(data); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"": 0o700, "tls": 0o700, "shoal.db": 0o600, "admin.token": 0o600, "tls/ca.pem": 0o600} {
		if fi, err := os.Stat(filepath.Join(data, p)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%q: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
}
