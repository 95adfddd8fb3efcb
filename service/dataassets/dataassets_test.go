package dataassets_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/dataassets"
)

// Versions are numbered as Azure numbers them when none is given; the
// same definition again is the same version; another definition under an
// existing version is refused; @latest follows creation and archiving.
func TestDataVersions(t *testing.T) {
	stores, _, ctx := teststore.Assets(t)
	svc := dataassets.New(stores)
	iris := func(path string) *asset.Data {
		return &asset.Data{Workspace: "WS", Name: "iris", Type: "uri_file", Path: path}
	}
	d, created, err := svc.Create(ctx, iris("https://h/iris.csv"))
	if err != nil || !created || d.Version != "1" || d.Workspace != "ws" || d.CreatedBy != "alice" {
		t.Fatalf("first create = %+v, %v, %v; want version 1 in ws by alice", d, created, err)
	}
	again := iris("https://h/iris.csv")
	again.Version, again.Name = "1", "IRIS"
	if d, created, err := svc.Create(ctx, again); err != nil || created || d.Version != "1" {
		t.Errorf("the same definition again = %+v, %v, %v; want version 1, not created", d, created, err)
	}
	changed := iris("https://h/iris2.csv")
	changed.Version = "1"
	if _, _, err := svc.Create(ctx, changed); core.ErrorCode(err) != core.ECONFLICT || core.ErrorField(err) != "version" {
		t.Errorf("another definition under version 1: %v; want ECONFLICT on version", err)
	}
	changed.Version = ""
	if d, _, err := svc.Create(ctx, changed); err != nil || d.Version != "2" {
		t.Errorf("next version = %+v, %v; want 2", d, err)
	}
	if d, err := svc.Get(ctx, "ws", "iris", "", "latest"); err != nil || d.Version != "2" || d.Path != "https://h/iris2.csv" {
		t.Errorf("latest = %+v, %v; want 2", d, err)
	}
	if _, err := svc.Archive(ctx, "ws", "iris", "2", true); err != nil {
		t.Fatal(err)
	}
	if d, err := svc.Get(ctx, "ws", "iris", "", "latest"); err != nil || d.Version != "1" {
		t.Errorf("latest after archiving 2 = %+v, %v; want 1", d, err)
	}
	if d, err := svc.Get(ctx, "ws", "iris", "2", ""); err != nil || !d.Archived {
		t.Errorf("archived version 2 by its version = %+v, %v; want it, archived", d, err)
	}
	if list, err := svc.List(ctx, asset.AssetFilter{Workspace: "ws"}); err != nil || len(list) != 1 {
		t.Errorf("list = %d, %v; want the one version not archived", len(list), err)
	}
	if _, err := svc.Get(ctx, "ws", "iris", "9", ""); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a version that does not exist: %v; want ENOTFOUND", err)
	}
	bad := iris("azureml://datastores/ds/paths/../../secrets")
	if _, _, err := svc.Create(ctx, bad); core.ErrorField(err) != "path" {
		t.Errorf("a '..' path: %v; want refused naming path", err)
	}
	if list, _ := svc.List(ctx, asset.AssetFilter{Workspace: "ws", Archived: true}); len(list) != 2 {
		t.Errorf("refused creates left versions: %d, want 2", len(list))
	}
}

// A path naming an upload is registered only when the workspace holds
// it: never for an upload that did not finish, nor for another
// workspace's upload learnt by its digest.
func TestDataUploadMustBeTheWorkspaces(t *testing.T) {
	stores, files, ctx := teststore.Assets(t)
	svc := dataassets.New(stores)
	id, err := files.PutArtifact("other", strings.NewReader("secret archive"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	p, err := asset.ArtifactDataPath(id, "")
	if err != nil {
		t.Fatal(err)
	}
	d := &asset.Data{Workspace: "ws", Name: "stolen", Path: p}
	if _, _, err := svc.Create(ctx, d); core.ErrorField(err) != "path" || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("another workspace's upload: %v; want refused naming path", err)
	}
	if list, _ := svc.List(ctx, asset.AssetFilter{Workspace: "ws", Archived: true}); len(list) != 0 {
		t.Fatalf("a refused version was stored: %+v", list[0])
	}
	if _, err := files.PutArtifact("ws", strings.NewReader("secret archive"), 1<<20); err != nil {
		t.Fatal(err)
	}
	if d, _, err := svc.Create(ctx, &asset.Data{Workspace: "ws", Name: "mine", Path: p}); err != nil || d.Type != asset.DataURIFolder {
		t.Fatalf("the workspace's own upload: %+v, %v", d, err)
	}
}
