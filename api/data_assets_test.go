package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/identity"
)

// TestDataAssetRoutes: the native routes of data assets and models
// register versions from Azure's YAML keys ($schema accepted), number
// them, show @latest, archive and restore; hostile documents are 400
// naming the field and store nothing; a Reader reads and may not write.
func TestDataAssetRoutes(t *testing.T) {
	e := newTestEnv(t)
	base := "/api/v1/workspaces/default/"
	iris := `{"$schema":"https://azuremlschemas.azureedge.net/latest/data.schema.json","name":"iris","type":"uri_file","path":"https://example.com/iris.csv","tags":{"src":"uci"}}`
	if out := mustSend(t, e, e.admin, "POST", base+"data", iris, 201).json(t); out["version"] != "1" || out["type"] != "uri_file" || out["created_by"] == "" {
		t.Fatalf("create: %v", out)
	}
	mustSend(t, e, e.admin, "PUT", base+"data/iris/versions/1", iris, 200)
	mustSend(t, e, e.admin, "PUT", base+"data/iris/versions/1", strings.Replace(iris, "iris.csv", "other.csv", 1), 409)
	mustSend(t, e, e.admin, "POST", base+"data", strings.Replace(iris, "iris.csv", "iris2.csv", 1), 201)
	if out := mustSend(t, e, e.admin, "GET", base+"data/iris/labels/latest", "", 200).json(t); out["version"] != "2" {
		t.Fatalf("latest: %v", out)
	}
	mustSend(t, e, e.admin, "POST", base+"data/iris/archive?version=2", "", 200)
	if out := mustSend(t, e, e.admin, "GET", base+"data/iris/labels/latest", "", 200).json(t); out["version"] != "1" {
		t.Fatalf("latest after archiving 2: %v", out)
	}
	mustSend(t, e, e.admin, "POST", base+"data/iris/restore", "", 200)

	for body, field := range map[string]string{
		`{"name":"bad","path":"azureml://datastores/ds/paths/../../x"}`: "path",
		`{"name":"bad","path":"./local"}`:                               "path",
		`{"name":"bad","type":"table","path":"s3://b/k"}`:               "type",
		`{"name":"bad","path":"s3://b/k","datastore":"x"}`:              "datastore",
		`{"name":"bad","path":"s3://b/k","tags":{"a/b":"c"}}`:           "tags.a/b",
	} {
		resp, out := do(t, e.ts, e.admin, "POST", base+"data", body, nil)
		if errBody, _ := out["error"].(map[string]any); resp.StatusCode != 400 || errBody["target"] != field {
			t.Errorf("%s: %d %v, want 400 naming %s", body, resp.StatusCode, out, field)
		}
	}
	if resp, _ := do(t, e.ts, e.admin, "GET", base+"data/bad/versions/1", "", nil); resp.StatusCode != 404 {
		t.Errorf("a refused version was stored: %d", resp.StatusCode)
	}

	clf := `{"name":"clf","type":"mlflow_model","path":"s3://models/clf/","properties":{"framework":"sklearn"},"flavors":{"python_function":{"loader_module":"mlflow.sklearn"}}}`
	if out := mustSend(t, e, e.admin, "POST", base+"models", clf, 201).json(t); out["type"] != "mlflow_model" || fmt.Sprint(out["flavors"]) != "map[python_function:map[loader_module:mlflow.sklearn]]" {
		t.Fatalf("model: %v", out)
	}
	if resp, out := do(t, e.ts, e.admin, "POST", base+"models", `{"name":"m","type":"onnx","path":"s3://b/m"}`, nil); resp.StatusCode != 400 || out["error"].(map[string]any)["target"] != "type" {
		t.Errorf("unknown model type: %d %v", resp.StatusCode, out)
	}

	reader := addUser(t, e, "rita", identity.RoleReader)
	for _, p := range []string{"data", "data/iris/versions/1", "models", "models/clf/labels/latest"} {
		if resp, _ := do(t, e.ts, reader, "GET", base+p, "", nil); resp.StatusCode != 200 {
			t.Errorf("Reader GET %s: %d", p, resp.StatusCode)
		}
	}
	for _, p := range []string{"data", "models", "data/iris/archive"} {
		if resp, _ := do(t, e.ts, reader, "POST", base+p, `{"name":"r","path":"s3://b/k"}`, nil); resp.StatusCode != 403 {
			t.Errorf("Reader POST %s: %d", p, resp.StatusCode)
		}
	}
}

// TestARMDataAndModelVersions: Azure's DataVersionBase and ModelVersion
// shapes, written through ARM and read natively and back; containers
// show a DataContainer's dataType; refused fields are named as sent.
func TestARMDataAndModelVersions(t *testing.T) {
	e := newTestEnv(t)
	q := "?api-version=2024-04-01"
	ws := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/"
	send := func(method, path, body string, want int) map[string]any {
		t.Helper()
		resp, out := do(t, e.ts, e.admin, method, ws+path+q, body, nil)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, resp.StatusCode, out, want)
		}
		return out
	}
	props := func(m map[string]any) map[string]any { return m["properties"].(map[string]any) }

	d := send("PUT", "data/iris/versions/1", `{"properties":{"dataType":"uri_file","dataUri":"https://example.com/iris.csv","description":"iris","tags":{"a":"b"},"isAnonymous":false}}`, 201)
	if p := props(d); d["type"] != armasset.DataVersionType || p["dataType"] != "uri_file" || p["dataUri"] != "https://example.com/iris.csv" ||
		p["isArchived"] != false || !strings.HasSuffix(d["id"].(string), "/workspaces/default/data/iris/versions/1") {
		t.Fatalf("data version: %v", d)
	}
	if out := mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/data/iris/versions/1", "", 200).json(t); out["path"] != "https://example.com/iris.csv" || out["description"] != "iris" {
		t.Fatalf("native: %v", out)
	}
	got := send("GET", "data/iris/versions/1", "", 200)
	props(got)["isArchived"] = true
	if a := send("PUT", "data/iris/versions/1", jsonOf(t, got), 200); props(a)["isArchived"] != true {
		t.Fatalf("archive through a PUT of what GET showed: %v", a)
	}
	props(got)["isArchived"] = false
	send("PUT", "data/iris/versions/1", jsonOf(t, got), 200)
	c := send("GET", "data/iris", "", 200)
	if p := props(c); c["type"] != armasset.DataContainerType || p["dataType"] != "uri_file" || p["latestVersion"] != "1" || p["nextVersion"] != "2" {
		t.Fatalf("data container: %v", c)
	}
	if l := send("GET", "data", "", 200)["value"].([]any); len(l) != 1 {
		t.Fatalf("containers: %v", l)
	}

	m := send("PUT", "models/clf/versions/3", `{"properties":{"modelType":"CustomModel","modelUri":"s3://models/clf/","properties":{"framework":"sklearn"},"flavors":{"python_function":{"data":{"loader_module":"mlflow.sklearn"}}}}}`, 201)
	if p := props(m); m["type"] != armasset.ModelVersionType || p["modelType"] != "custom_model" || p["modelUri"] != "s3://models/clf/" ||
		fmt.Sprint(p["properties"]) != "map[framework:sklearn]" || fmt.Sprint(p["flavors"]) != "map[python_function:map[data:map[loader_module:mlflow.sklearn]]]" {
		t.Fatalf("model version: %v", m)
	}
	send("PUT", "models/clf/versions/3", jsonOf(t, send("GET", "models/clf/versions/3", "", 200)), 200)
	// azure-ai-ml reads every version's flavors as a map: {} when none.
	if p := props(send("PUT", "models/plain/versions/1", `{"properties":{"modelUri":"s3://models/plain/"}}`, 201)); fmt.Sprint(p["flavors"]) != "map[]" || p["modelType"] != "custom_model" {
		t.Fatalf("a model without flavors: %v", p)
	}
	if c := send("GET", "models/clf", "", 200); props(c)["nextVersion"] != "4" || c["type"] != armasset.ModelContainerType {
		t.Fatalf("model container: %v", c)
	}

	for path, b := range map[string]struct{ body, field string }{
		"data/bad/versions/1":   {`{"properties":{"dataType":"uri_folder","dataUri":"s3://b/../etc"}}`, "properties.dataUri"},
		"data/bad/versions/2":   {`{"properties":{"dataType":"table","dataUri":"s3://b/k"}}`, "properties.dataType"},
		"data/bad/versions/3":   {`{"properties":{"dataUri":"s3://b/k"}}`, "properties.dataType"},
		"data/bad/versions/4":   {`{"properties":{"dataType":"uri_file","dataUri":"s3://b/k","stage":"Production"}}`, "properties.stage"},
		"models/bad/versions/1": {`{"properties":{"modelType":"onnx","modelUri":"s3://b/k"}}`, "properties.modelType"},
		"models/bad/versions/2": {`{"properties":{"modelUri":"C:\\models\\m"}}`, "properties.modelUri"},
		"models/bad/versions/3": {`{"properties":{"modelUri":"s3://b/k","jobName":"j"}}`, "properties.jobName"},
		// A job output of no job of this workspace (Azure's notebooks
		// register a sweep's best model from its trial's output).
		"models/bad/versions/4": {`{"properties":{"modelUri":"azureml://jobs/nope/outputs/artifacts/paths/model/"}}`, "properties.modelUri"},
		"data/bad/versions/5":   {`{"properties":{"dataType":"uri_folder","dataUri":"azureml://jobs/nope/outputs/out"}}`, "properties.dataUri"},
	} {
		resp, out := do(t, e.ts, e.admin, "PUT", ws+path+q, b.body, nil)
		errBody, _ := out["error"].(map[string]any)
		if resp.StatusCode != 400 || errBody["target"] != b.field {
			t.Errorf("%s %s: %d %v, want 400 naming %s", path, b.body, resp.StatusCode, out, b.field)
		}
	}
	if resp, out := do(t, e.ts, e.admin, "DELETE", ws+"data/iris/versions/1"+q, "", nil); resp.StatusCode != 400 || !strings.Contains(fmt.Sprint(out["error"]), "shoal data archive") {
		t.Errorf("DELETE: %d %v", resp.StatusCode, out)
	}
	reader := addUser(t, e, "rita", identity.RoleReader)
	if resp, _ := do(t, e.ts, reader, "GET", ws+"models/clf/versions/3"+q, "", nil); resp.StatusCode != 200 {
		t.Errorf("Reader GET: %d", resp.StatusCode)
	}
	if resp, _ := do(t, e.ts, reader, "PUT", ws+"data/r/versions/1"+q, `{"properties":{"dataType":"uri_file","dataUri":"s3://b/k"}}`, nil); resp.StatusCode != 403 {
		t.Errorf("Reader PUT: %d", resp.StatusCode)
	}
}
