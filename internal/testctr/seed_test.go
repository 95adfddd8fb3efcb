package testctr

import (
	"os"
	"path/filepath"
	"testing"
)

// A registry's storage saved once seeds every later set-up's registries
// with the same files; without a seed nothing is copied and the caller
// pushes; a second save keeps the first seed.
func TestRegistrySeedSavedThenCopied(t *testing.T) {
	cache := t.TempDir()
	tarball := filepath.Join(cache, "base-0123456789ab.tar")
	if err := os.WriteFile(tarball, []byte("tar"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(t.TempDir(), "registry", "data"), filepath.Join(t.TempDir(), "auth-registry", "data")
	if seedRegistries(tarball, a, b) {
		t.Fatal("seeded without a seed")
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("no seed, yet %s: %v", a, err)
	}

	pushed := filepath.Join(t.TempDir(), "data")
	blob := filepath.Join("docker", "registry", "v2", "blobs", "sha256", "ab", "abcd", "data")
	writeFile(t, filepath.Join(pushed, blob), "layer")
	saveRegistrySeed(tarball, pushed)
	writeFile(t, filepath.Join(pushed, blob), "changed after the save")
	saveRegistrySeed(tarball, pushed)

	if !seedRegistries(tarball, a, b) {
		t.Fatal("not seeded after a save")
	}
	for _, d := range []string{a, b} {
		got, err := os.ReadFile(filepath.Join(d, blob))
		if err != nil || string(got) != "layer" {
			t.Errorf("%s: %q, %v; want the first save's layer", d, got, err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
