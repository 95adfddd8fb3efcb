package environments_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/archive"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/environments"
	"github.com/shoal-ml/shoal/store/filestore"
)

func newService(t *testing.T) (*environments.Service, *filestore.Store, context.Context) {
	t.Helper()
	stores, files, ctx := teststore.Assets(t)
	return environments.New(stores), files, ctx
}

func wantErr(t *testing.T, what string, err error, code, field string) {
	t.Helper()
	e, ok := err.(*core.Error)
	if !ok || e.Code != code || e.Field != field {
		t.Errorf("%s: %v, want %s on field %q", what, err, code, field)
	}
}

// Versions are numbered as Azure numbers them when none is given: 1, then
// one more than the largest integer version; the same definition again is
// the same version, another definition under an existing version is
// refused.
func TestCreateVersions(t *testing.T) {
	svc, _, ctx := newService(t)
	create := func(e asset.Environment) (*asset.Environment, bool, error) {
		e.Workspace = "WS"
		return svc.Create(ctx, &e)
	}
	e, created, err := create(asset.Environment{Name: "train", Image: "python:3.11"})
	if err != nil || !created || e.Version != "1" || e.Workspace != "ws" || e.CreatedBy != "alice" || e.OSType != "linux" {
		t.Fatalf("first create = %+v, %v, %v; want version 1 in ws by alice", e, created, err)
	}
	if _, _, err := create(asset.Environment{Name: "train", Version: "10", Image: "python:3.12"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := create(asset.Environment{Name: "train", Version: "rc-1", Image: "python:3.13"}); err != nil {
		t.Fatal(err)
	}
	if e, _, err := create(asset.Environment{Name: "TRAIN", Image: "python:3.14"}); err != nil || e.Version != "11" {
		t.Errorf("create without a version after 1, 10 and rc-1 = %+v, %v; want version 11", e, err)
	}
	if e, created, err := create(asset.Environment{Name: "train", Version: "10", Image: "python:3.12"}); err != nil || created || e.Version != "10" {
		t.Errorf("the same definition again = %+v, %v, %v; want the existing version, not created", e, created, err)
	}
	_, _, err = create(asset.Environment{Name: "train", Version: "10", Image: "python:3.13"})
	wantErr(t, "another definition under version 10", err, core.ECONFLICT, "version")
	_, _, err = create(asset.Environment{Name: "AzureML-x", Image: "python"})
	wantErr(t, "a reserved name", err, core.EINVALID, "name")
	_, _, err = svc.Create(ctx, &asset.Environment{Workspace: "nope", Name: "x", Image: "python"})
	wantErr(t, "another workspace", err, core.ENOTFOUND, "")

	list, err := svc.List(ctx, asset.AssetFilter{Workspace: "ws"})
	if err != nil || len(list) != 4 || list[0].Version != "11" {
		t.Errorf("list = %d versions (%v), want 4, newest first", len(list), err)
	}
	if got, err := svc.Get(ctx, "ws", "train", "", "latest"); err != nil || got.Version != "11" {
		t.Errorf("latest = %+v, %v", got, err)
	}
	_, err = svc.Get(ctx, "ws", "train", "", "")
	wantErr(t, "show without version or label", err, core.EINVALID, "version")
	_, err = svc.Get(ctx, "ws", "train", "", "stable")
	wantErr(t, "show with another label", err, core.EINVALID, "label")
}

// Archiving a version moves latest to the one before; archiving the name
// archives every version; restoring brings them back.
func TestArchiveRestore(t *testing.T) {
	svc, _, ctx := newService(t)
	for _, img := range []string{"python:3.11", "python:3.12"} {
		if _, _, err := svc.Create(ctx, &asset.Environment{Workspace: "ws", Name: "train", Image: img}); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := svc.Archive(ctx, "ws", "train", "2", true); err != nil || len(out) != 1 || !out[0].Archived {
		t.Fatalf("archive 2 = %+v, %v", out, err)
	}
	if e, err := svc.Get(ctx, "ws", "train", "", "latest"); err != nil || e.Version != "1" {
		t.Errorf("latest after archiving 2 = %+v, %v; want 1", e, err)
	}
	if out, err := svc.Archive(ctx, "ws", "train", "", true); err != nil || len(out) != 2 || !out[0].Archived || !out[1].Archived {
		t.Errorf("archive the name = %+v, %v; want both versions archived", out, err)
	}
	_, err := svc.Get(ctx, "ws", "train", "", "latest")
	wantErr(t, "latest with every version archived", err, core.ENOTFOUND, "")
	if list, err := svc.List(ctx, asset.AssetFilter{Workspace: "ws"}); err != nil || len(list) != 0 {
		t.Errorf("list without archived = %d, %v", len(list), err)
	}
	if e, _, err := svc.Create(ctx, &asset.Environment{Workspace: "ws", Name: "train", Image: "python:3.13"}); err != nil || e.Version != "3" {
		t.Errorf("next version after archiving = %+v, %v; want 3 (archived numbers are not reused)", e, err)
	}
	if _, err := svc.Archive(ctx, "ws", "train", "", false); err != nil {
		t.Fatal(err)
	}
	if list, _ := svc.List(ctx, asset.AssetFilter{Workspace: "ws"}); len(list) != 3 {
		t.Errorf("list after restore = %d versions, want 3", len(list))
	}
	_, err = svc.Archive(ctx, "ws", "nope", "", true)
	wantErr(t, "archive a missing name", err, core.ENOTFOUND, "")
}

// A build environment's context must be an uploaded archive holding its
// Dockerfile.
func TestCreateBuild(t *testing.T) {
	svc, files, ctx := newService(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM python:3.11\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := archive.Pack(&buf, dir, archive.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	id, err := files.PutArtifact("ws", &buf, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := svc.Create(ctx, &asset.Environment{Workspace: "ws", Name: "built", Build: &asset.EnvironmentBuild{Path: id}})
	if err != nil || e.Build.DockerfilePath != "Dockerfile" {
		t.Fatalf("create build = %+v, %v", e, err)
	}
	_, _, err = svc.Create(ctx, &asset.Environment{Workspace: "ws", Name: "built", Build: &asset.EnvironmentBuild{Path: id, DockerfilePath: "docker/Dockerfile"}})
	wantErr(t, "a Dockerfile not in the context", err, core.EINVALID, "build.dockerfile_path")
	_, _, err = svc.Create(ctx, &asset.Environment{Workspace: "ws", Name: "built", Build: &asset.EnvironmentBuild{Path: "sha256:" + strings.Repeat("0", 64)}})
	wantErr(t, "a context never uploaded", err, core.EINVALID, "build.path")
	_, _, err = svc.Create(ctx, &asset.Environment{Workspace: "ws", Name: "built", Build: &asset.EnvironmentBuild{Path: "./ctx"}})
	wantErr(t, "a local path", err, core.EINVALID, "build.path")
}
