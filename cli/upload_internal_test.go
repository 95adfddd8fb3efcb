package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUploadJobFilesMissingPathsSayWhereTheyWereLookedFor(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is uploaded (no client): the paths are checked first.
	err = uploadJobFiles(context.Background(), nil, "default", dir, map[string]any{"code": "srcx"})
	want := "code: folder srcx not found (relative to the YAML file's folder " + abs + ")"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if strings.Contains(err.Error(), "stat ") {
		t.Fatalf("a raw Go error leaked: %v", err)
	}
	err = uploadJobFiles(context.Background(), nil, "default", dir, map[string]any{
		"inputs": map[string]any{"data": map[string]any{"type": "uri_folder", "path": "./datax"}}})
	want = "inputs.data.path: ./datax not found (relative to the YAML file's folder " + abs + ")"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	missing := filepath.Join(abs, "nope")
	err = uploadJobFiles(context.Background(), nil, "default", dir, map[string]any{"code": missing})
	want = "code: folder " + missing + " not found"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	// A file that exists but cannot be read says so, without "stat".
	if os.Getuid() != 0 {
		locked := filepath.Join(dir, "locked")
		if err := os.MkdirAll(filepath.Join(locked, "in"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o755)
		err = uploadJobFiles(context.Background(), nil, "default", dir, map[string]any{"code": "locked/in"})
		if err == nil || !strings.Contains(err.Error(), "code: cannot read locked/in") || !strings.Contains(err.Error(), "permission denied") || strings.Contains(err.Error(), "stat ") {
			t.Fatalf("got %v", err)
		}
	}
}
