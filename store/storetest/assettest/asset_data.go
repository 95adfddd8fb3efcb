package assettest

import (
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// testDataAssets runs testAssets over data assets.
func testDataAssets(t *testing.T, s store.Store, clock *stcheck.Clock) {
	plain := func(ws, name, version string) *asset.Data {
		return &asset.Data{Workspace: ws, Name: name, Version: version, Type: asset.DataURIFolder, Path: "s3://bucket/" + name + "/"}
	}
	testAssets(t, s, assetCase[*asset.Data]{
		first: &asset.Data{Workspace: "WS", Name: "Train", Version: "1", Description: "iris", Tags: map[string]string{"team": "a"},
			Type: asset.DataURIFile, Path: "azureml://datastores/workspaceblobstore/paths/LocalUpload/ab/iris.csv", CreatedBy: "alice"},
		second: &asset.Data{Workspace: "WS", Name: "Train", Version: "0.9", Type: asset.DataMLTable, Path: "https://acct.blob.core.windows.net/c/t/"},
		plain:  plain,
	})
}

// testModels runs testAssets over models, with every field set.
func testModels(t *testing.T, s store.Store, clock *stcheck.Clock) {
	plain := func(ws, name, version string) *asset.Model {
		return &asset.Model{Workspace: ws, Name: name, Version: version, Type: asset.ModelCustom, Path: "s3://bucket/" + name + "/"}
	}
	testAssets(t, s, assetCase[*asset.Model]{
		first: &asset.Model{Workspace: "WS", Name: "Train", Version: "1", Description: "clf", Tags: map[string]string{"team": "a"},
			Type: asset.ModelMLflow, Path: "azureml://datastores/workspaceblobstore/paths/m/", Properties: map[string]string{"framework": "sklearn"},
			Flavors: map[string]map[string]string{"python_function": {"loader_module": "mlflow.sklearn", "env_version": "2"}}, CreatedBy: "alice"},
		second: &asset.Model{Workspace: "WS", Name: "Train", Version: "0.9", Type: asset.ModelTriton, Path: "s3://b/triton/"},
		plain:  plain,
	})
}
