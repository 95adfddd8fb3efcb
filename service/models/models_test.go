package models_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/models"
)

// Models are versioned as every asset: the next version, idempotent
// creation, conflicts, @latest and archive; their flavors and properties
// count in their definition.
func TestModelVersions(t *testing.T) {
	stores, files, ctx := teststore.Assets(t)
	svc := models.New(stores)
	id, err := files.PutArtifact("ws", strings.NewReader("model archive"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := asset.ArtifactDataPath(id, "")
	clf := func() *asset.Model {
		return &asset.Model{Workspace: "ws", Name: "clf", Type: "mlflow_model", Path: p,
			Flavors: map[string]map[string]string{"python_function": {"loader_module": "mlflow.sklearn", "v": "2"}}}
	}
	m, created, err := svc.Create(ctx, clf())
	if err != nil || !created || m.Version != "1" {
		t.Fatalf("create = %+v, %v, %v", m, created, err)
	}
	again := clf()
	again.Version = "1"
	if _, created, err := svc.Create(ctx, again); err != nil || created {
		t.Errorf("the same model again: created %v, %v", created, err)
	}
	other := clf()
	other.Version, other.Flavors = "1", map[string]map[string]string{"python_function": {"loader_module": "mlflow.pytorch"}}
	if _, _, err := svc.Create(ctx, other); core.ErrorCode(err) != core.ECONFLICT {
		t.Errorf("other flavors under version 1: %v; want ECONFLICT", err)
	}
	other.Version = ""
	if m, _, err := svc.Create(ctx, other); err != nil || m.Version != "2" {
		t.Fatalf("next = %+v, %v", m, err)
	}
	if _, err := svc.Archive(ctx, "ws", "clf", "", true); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, "ws", "clf", "", "latest"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("latest of a model archived whole: %v; want ENOTFOUND", err)
	}
	if list, err := svc.Archive(ctx, "ws", "clf", "", false); err != nil || len(list) != 2 || list[0].Archived {
		t.Errorf("restore = %+v, %v", list, err)
	}
	missing := &asset.Model{Workspace: "ws", Name: "ghost", Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/" + strings.Repeat("0", 64) + "/"}
	if _, _, err := svc.Create(ctx, missing); core.ErrorField(err) != "path" {
		t.Errorf("an upload that never finished: %v; want refused naming path", err)
	}
}
