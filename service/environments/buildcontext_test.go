package environments_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/service/environments"
)

// A build context over the limit is refused naming its path field and the
// limit, for environments and jobs alike (CheckBuildContext with the
// job's prefix); one under it with its Dockerfile is taken.
func TestBuildContextLimit(t *testing.T) {
	_, files, _ := newService(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM python:3.11\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Random bytes do not compress: the archive is about this big.
	data := make([]byte, 64<<10)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "weights.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := archive.Pack(&buf, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	id, err := files.PutArtifact("ws", &buf, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b := &asset.EnvironmentBuild{Path: id, DockerfilePath: "Dockerfile"}
	if err := environments.CheckBuildContext(files, "ws", "environment.build.", b); err != nil {
		t.Fatalf("a context under the limit: %v", err)
	}
	defer environments.SetMaxBuildContextBytes(size - 1)()
	err = environments.CheckBuildContext(files, "ws", "environment.build.", b)
	wantErr(t, "a context over the limit", err, core.EINVALID, "environment.build.path")
	if !strings.Contains(core.ErrorMessage(err), "over the limit") {
		t.Errorf("over the limit: %q does not say so", core.ErrorMessage(err))
	}
	environments.SetMaxBuildContextBytes(size)
	if err := environments.CheckBuildContext(files, "ws", "environment.build.", b); err != nil {
		t.Errorf("a context exactly at the limit: %v", err)
	}
	err = environments.CheckBuildContext(files, "ws", "environment.build.", &asset.EnvironmentBuild{Path: id, DockerfilePath: "train.Dockerfile"})
	wantErr(t, "a job's build without its Dockerfile", err, core.EINVALID, "environment.build.dockerfile_path")
}
