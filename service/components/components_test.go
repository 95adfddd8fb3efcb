package components_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/components"
	"github.com/shoal-ml/shoal/store/filestore"
)

func newService(t *testing.T) (*components.Service, *filestore.Store, context.Context) {
	t.Helper()
	stores, files, ctx := teststore.Assets(t)
	return components.New(stores), files, ctx
}

func component(t *testing.T, doc string) *job.Component {
	t.Helper()
	c, err := job.DecodeComponent([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	c.Workspace = "WS"
	return c
}

const trainDoc = `{"name": "train", "type": "command", "command": "python train.py ${{inputs.data}} --epochs ${{inputs.epochs}} ${{outputs.model}}",
	"inputs": {"data": {"type": "uri_folder"}, "epochs": {"type": "integer", "default": 10}}, "outputs": {"model": {"type": "uri_folder"}},
	"environment": "azureml:sklearn@latest"}`

// Versions are numbered as Azure numbers them when none is given; the
// same definition again is the same version; another definition under an
// existing version is refused; latest and archive behave as environments'.
func TestComponentVersions(t *testing.T) {
	svc, _, ctx := newService(t)
	c, created, err := svc.Create(ctx, component(t, trainDoc))
	if err != nil || !created || c.Version != "1" || c.Workspace != "ws" || c.CreatedBy != "alice" {
		t.Fatalf("first create = %+v, %v, %v; want version 1 in ws by alice", c, created, err)
	}
	again := component(t, trainDoc)
	again.Version = "1"
	if c, created, err := svc.Create(ctx, again); err != nil || created || c.Version != "1" {
		t.Errorf("the same definition again = %+v, %v, %v; want version 1, not created", c, created, err)
	}
	changed := component(t, strings.Replace(trainDoc, "train.py", "train2.py", 1))
	changed.Version = "1"
	if _, _, err := svc.Create(ctx, changed); core.ErrorCode(err) != core.ECONFLICT || core.ErrorField(err) != "version" {
		t.Errorf("another definition under version 1: %v; want ECONFLICT on version", err)
	}
	changed.Version = ""
	if c, _, err := svc.Create(ctx, changed); err != nil || c.Version != "2" {
		t.Errorf("next version = %+v, %v; want 2", c, err)
	}
	if c, err := svc.Get(ctx, "ws", "train", "", "latest"); err != nil || c.Version != "2" {
		t.Errorf("latest = %+v, %v; want 2", c, err)
	}
	if c, err := svc.Get(ctx, "ws", "train", "1", ""); err != nil || c.Inputs["epochs"].Default != json.Number("10") {
		t.Errorf("version 1 = %+v, %v; want its default 10 as written", c, err)
	}
	if _, err := svc.Archive(ctx, "ws", "train", "2", true); err != nil {
		t.Fatal(err)
	}
	if c, err := svc.Get(ctx, "ws", "train", "", "latest"); err != nil || c.Version != "1" {
		t.Errorf("latest after archiving 2 = %+v, %v; want 1", c, err)
	}
	list, err := svc.List(ctx, asset.AssetFilter{Workspace: "ws"})
	if err != nil || len(list) != 1 {
		t.Errorf("list = %d, %v; want the one version not archived", len(list), err)
	}
	if _, err := svc.Get(ctx, "ws", "train", "", "prod"); core.ErrorField(err) != "label" {
		t.Errorf("label prod: %v; want refused naming label", err)
	}
	if _, err := svc.List(ctx, asset.AssetFilter{Workspace: "nope"}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("a missing workspace: %v; want ENOTFOUND", err)
	}
	bad := component(t, `{"type": "command", "command": "x"}`)
	if _, _, err := svc.Create(ctx, bad); core.ErrorField(err) != "name" {
		t.Errorf("no name: %v; want refused naming name", err)
	}
}

// Code must be an artifact uploaded to the workspace.
func TestComponentCode(t *testing.T) {
	svc, files, ctx := newService(t)
	c := component(t, trainDoc)
	c.Code = "./src"
	if _, _, err := svc.Create(ctx, c); core.ErrorField(err) != "code" {
		t.Errorf("a local path: %v; want refused naming code", err)
	}
	c = component(t, trainDoc)
	c.Code = "sha256:" + strings.Repeat("a", 64)
	if _, _, err := svc.Create(ctx, c); core.ErrorField(err) != "code" || !strings.Contains(core.ErrorMessage(err), "not been uploaded") {
		t.Errorf("an artifact never uploaded: %v; want refused naming code", err)
	}
	id, err := files.PutArtifact("ws", bytes.NewReader([]byte("code")), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	c = component(t, trainDoc)
	c.Code = id
	if got, _, err := svc.Create(ctx, c); err != nil || got.Code != id {
		t.Errorf("uploaded code: %+v, %v", got, err)
	}
}
