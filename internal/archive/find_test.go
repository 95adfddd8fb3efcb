package archive_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/internal/archive"
)

func TestHasFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "docker"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Dockerfile", "docker/train.Dockerfile"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("FROM scratch\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := archive.Pack(&buf, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"Dockerfile": true, "./docker/train.Dockerfile": true, "docker": false, "Dockerfile.dev": false, "docker/Dockerfile": false} {
		got, err := archive.HasFile(bytes.NewReader(buf.Bytes()), name)
		if err != nil || got != want {
			t.Errorf("HasFile(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := archive.HasFile(strings.NewReader("not gzip"), "Dockerfile"); err == nil {
		t.Error("HasFile of a non-archive: no error")
	}
}
