package testk8s

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readArchive reads a tar file into name → contents.
func readArchive(t *testing.T, r io.Reader) (map[string][]byte, map[string]*tar.Header) {
	t.Helper()
	files, headers := map[string][]byte{}, map[string]*tar.Header{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, headers
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[h.Name], headers[h.Name] = b, h
	}
}

func TestWriteImageIsADockerArchiveWithMatchingDigests(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "img.tar")
	err := WriteImage(dest, "shoal.test/x:1", ImageConfig{Entrypoint: []string{"/x"}}, []ImageFile{
		{Path: "/x", Mode: 0o755, Data: []byte("#!/bin/sh\n")}, {Path: "/d", Dir: true}, {Path: "/d/l", Link: "../x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files, _ := readArchive(t, f)
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json %q: %v", files["manifest.json"], err)
	}
	m := manifest[0]
	if len(m.RepoTags) != 1 || m.RepoTags[0] != "shoal.test/x:1" || len(m.Layers) != 1 {
		t.Fatalf("manifest %+v", m)
	}
	var cfg struct {
		Architecture, OS string
		Config           struct{ Entrypoint []string }
		RootFS           struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(files[m.Config], &cfg); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(files[m.Layers[0]])
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("diff_ids %v, want the layer's digest", cfg.RootFS.DiffIDs)
	}
	configSum := sha256.Sum256(files[m.Config])
	if m.Config != hex.EncodeToString(configSum[:])+".json" {
		t.Errorf("config named %s, not by its digest", m.Config)
	}
	if cfg.OS != "linux" || len(cfg.Config.Entrypoint) != 1 {
		t.Errorf("config %+v", cfg)
	}
	layer, headers := readArchive(t, bytes.NewReader(files[m.Layers[0]]))
	if string(layer["x"]) != "#!/bin/sh\n" || headers["x"].Mode != 0o755 {
		t.Errorf("layer's /x: %q mode %o", layer["x"], headers["x"].Mode)
	}
	if h := headers["d/"]; h == nil || h.Typeflag != tar.TypeDir {
		t.Errorf("layer's /d: %+v", h)
	}
	if h := headers["d/l"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "../x" {
		t.Errorf("layer's /d/l: %+v", h)
	}
}

func TestWriteImageRefusesRelativeAndRootPaths(t *testing.T) {
	for _, p := range []string{"x", "/", ""} {
		err := WriteImage(filepath.Join(t.TempDir(), "img.tar"), "shoal.test/x:1", ImageConfig{}, []ImageFile{{Path: p}})
		if err == nil || !strings.Contains(err.Error(), "must be absolute") {
			t.Errorf("path %q: %v, want the rule named", p, err)
		}
	}
}

// Only provider/kubernetes imports k8s.io (client-go, pinned to the
// harness's Kubernetes line); nothing depends on etcd, and the harness
// itself links neither: the build module is a module of its own, which
// Go does not descend into.
func TestOnlyTheKubernetesProviderImportsKubernetes(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/shoal-ml/shoal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, out)
	}
	sawHarness := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, _, _ := strings.Cut(fields[0], " ")
		sawHarness = sawHarness || pkg == "github.com/shoal-ml/shoal/internal/testk8s"
		for _, imp := range fields[1:] {
			switch {
			case strings.HasPrefix(imp, "go.etcd.io/"):
				t.Errorf("%s imports %s", pkg, imp)
			case strings.HasPrefix(imp, "k8s.io/") && !strings.HasPrefix(pkg, "github.com/shoal-ml/shoal/provider/kubernetes"):
				t.Errorf("%s imports %s: only provider/kubernetes may", pkg, imp)
			}
		}
	}
	if !sawHarness {
		t.Errorf("go list did not list internal/testk8s: %s", tail(string(out), 500))
	}
	deps, err := exec.Command("go", "list", "-deps", "-test", "github.com/shoal-ml/shoal/internal/testk8s").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, deps)
	}
	for _, pkg := range strings.Fields(string(deps)) {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "go.etcd.io/") {
			t.Errorf("the harness depends on %s", pkg)
		}
	}
}
