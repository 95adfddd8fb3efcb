package asset_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/core"
)

// Hostile and malformed models are refused naming the field and the rule.
func TestModelRefusesHostileInput(t *testing.T) {
	props := map[string]string{}
	for i := 0; i < asset.MaxModelProperties+1; i++ {
		props[strings.Repeat("p", i+1)] = "v"
	}
	for _, tc := range []struct {
		name  string
		m     asset.Model
		field string
		rule  string
	}{
		{"dotdot", asset.Model{Name: "m", Path: "azureml://datastores/ds/paths/../x"}, "path", "'..'"},
		{"unknown type", asset.Model{Name: "m", Type: "onnx_model", Path: "https://h/x"}, "type", "custom_model, mlflow_model, triton_model"},
		{"data type on model", asset.Model{Name: "m", Type: "uri_folder", Path: "https://h/x"}, "type", "not one of"},
		{"too many properties", asset.Model{Name: "m", Path: "https://h/x", Properties: props}, "properties", "at most"},
		{"huge property", asset.Model{Name: "m", Path: "https://h/x", Properties: map[string]string{"k": strings.Repeat("v", 5001)}}, "properties.k", "5000"},
		{"control in property", asset.Model{Name: "m", Path: "https://h/x", Properties: map[string]string{"k": "a\x07"}}, "properties.k", "control"},
		{"huge flavors", asset.Model{Name: "m", Path: "https://h/x", Flavors: map[string]map[string]string{"f": {"x": strings.Repeat("x", asset.MaxModelFlavorsBytes)}}}, "flavors", "bytes"},
		{"local path", asset.Model{Name: "m", Path: "model/"}, "path", "local path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			err := asset.NormalizeModel(&m)
			if core.ErrorField(err) != tc.field || !strings.Contains(err.Error(), tc.rule) {
				t.Fatalf("got %v (field %q), want field %q saying %q", err, core.ErrorField(err), tc.field, tc.rule)
			}
		})
	}
}

// A model's type defaults to custom_model; its document decodes strictly
// with $schema accepted; flavors and properties count in its definition.
func TestModelDocument(t *testing.T) {
	m, err := asset.DecodeModel([]byte(`{"$schema":"https://azuremlschemas.azureedge.net/latest/model.schema.json","name":"clf","path":"azureml://datastores/workspaceblobstore/paths/m/","properties":{"framework":"sklearn"},"flavors":{"python_function":{"loader_module":"mlflow.sklearn"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := asset.NormalizeModel(m); err != nil || m.Type != asset.ModelCustom {
		t.Fatalf("type %q, %v", m.Type, err)
	}
	if _, err := asset.DecodeModel([]byte(`{"name":"clf","stage":"Production"}`)); core.ErrorField(err) != "stage" {
		t.Fatalf("an unknown key: %v", err)
	}
	n := *m
	n.Flavors = map[string]map[string]string{"python_function": {"loader_module": "mlflow.pytorch"}}
	if !asset.SameModel(m, &*m) || asset.SameModel(m, &n) {
		t.Fatal("flavors do not count in a model's definition")
	}
}

// An uploaded artifact maps to its workspaceblobstore path and back.
func TestArtifactDataPath(t *testing.T) {
	id := "sha256:" + strings.Repeat("ab", 32)
	folder, err := asset.ArtifactDataPath(id, "")
	if err != nil || folder != "azureml://datastores/workspaceblobstore/paths/LocalUpload/"+strings.Repeat("ab", 32)+"/" {
		t.Fatalf("%q, %v", folder, err)
	}
	file, err := asset.ArtifactDataPath(id, "iris.csv")
	if err != nil || file != folder+"iris.csv" {
		t.Fatalf("%q, %v", file, err)
	}
	for uri, want := range map[string][2]string{folder: {id, ""}, file: {id, "iris.csv"}} {
		got, f, ok := asset.DataPathArtifact(uri)
		if !ok || got != want[0] || f != want[1] {
			t.Errorf("%s: %q %q %v", uri, got, f, ok)
		}
		if err := asset.ValidateAssetPath("path", uri); err != nil {
			t.Errorf("%s is refused as a path: %v", uri, err)
		}
	}
	for _, bad := range []struct{ id, file string }{{"sha256:xyz", ""}, {"md5:" + strings.Repeat("a", 64), ""}, {id, "a/b"}, {id, ".."}, {id, `a\b`}} {
		if _, err := asset.ArtifactDataPath(bad.id, bad.file); core.ErrorField(err) != "path" {
			t.Errorf("%q %q: %v", bad.id, bad.file, err)
		}
	}
	for _, other := range []string{
		"azureml://datastores/workspaceblobstore/paths/LocalUpload/" + strings.Repeat("AB", 32) + "/",
		"azureml://datastores/workspaceblobstore/paths/LocalUpload/" + strings.Repeat("ab", 32) + "/a/b",
		"azureml://datastores/workspaceblobstore/paths/LocalUpload/" + strings.Repeat("ab", 32) + "/..",
		"azureml://datastores/other/paths/LocalUpload/" + strings.Repeat("ab", 32) + "/",
		"https://h/x",
	} {
		if id, _, ok := asset.DataPathArtifact(other); ok {
			t.Errorf("%s read as artifact %s", other, id)
		}
	}
}
