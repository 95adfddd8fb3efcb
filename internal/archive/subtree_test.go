package archive

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Subtree takes one folder out of an archive, its prefix off, and
// nothing else; a folder that is not there is reported.
func TestSubtree(t *testing.T) {
	src := t.TempDir()
	for name, text := range map[string]string{"data/a.txt": "a", "data/sub/b.txt": "b", "model/m.bin": "m", "database.txt": "x"} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var all bytes.Buffer
	if _, err := Pack(&all, src, PackOptions{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	found, err := Subtree(&out, bytes.NewReader(all.Bytes()), "data")
	if err != nil || !found {
		t.Fatalf("Subtree data: found %v, %v", found, err)
	}
	dst := t.TempDir()
	if err := Unpack(&out, dst, Limits{}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "a", "sub/b.txt": "b"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	for _, name := range []string{"m.bin", "model", "database.txt", "data"} {
		if _, err := os.Stat(filepath.Join(dst, name)); err == nil {
			t.Errorf("%s came along", name)
		}
	}
	var none bytes.Buffer
	if found, err := Subtree(&none, bytes.NewReader(all.Bytes()), "missing"); err != nil || found {
		t.Errorf("a missing folder: found %v, %v", found, err)
	}
	if _, err := Subtree(&none, bytes.NewReader(all.Bytes()), "../x"); err == nil {
		t.Error("a prefix with .. was taken")
	}
}
