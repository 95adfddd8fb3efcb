package rank

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Attack: a download of an nfs datastore (copied by the agent as root)
// must not carry a file or folder the job's account could not read.
func TestOthersMayRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open.txt")
	if err := os.WriteFile(open, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := othersMayRead(dir); err != nil {
		t.Fatalf("a readable folder: %v", err)
	}
	private := filepath.Join(dir, "sub", "root-only.txt")
	if err := os.MkdirAll(filepath.Dir(private), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(private, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := othersMayRead(dir); err == nil || !strings.Contains(err.Error(), "sub/root-only.txt") || !strings.Contains(err.Error(), "0600") {
		t.Errorf("a root-only file: %v", err)
	}
	if err := othersMayRead(open); err != nil {
		t.Errorf("a readable file alone: %v", err)
	}
	if err := othersMayRead(private); err == nil {
		t.Error("a root-only file alone was allowed")
	}
	if err := os.Remove(private); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(private), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := othersMayRead(dir); err == nil || !strings.Contains(err.Error(), "sub") {
		t.Errorf("a folder others may not enter: %v", err)
	}
}
