package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/identity"
)

const armComps = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/components"

// armTrainSpec is a command component's document as azure-ai-ml sends it
// in a ComponentVersion's componentSpec.
const armTrainSpec = `{"$schema": "https://azuremlschemas.azureedge.net/latest/commandComponent.schema.json",
	"name": "train", "version": "1", "type": "command", "display_name": "Train",
	"command": "python train.py ${{inputs.data}} --epochs ${{inputs.epochs}} ${{outputs.model}}",
	"inputs": {"data": {"type": "uri_folder"}, "epochs": {"type": "integer", "default": 10}},
	"outputs": {"model": {"type": "uri_folder"}},
	"environment": "azureml:sklearn@latest", "resources": {"instance_count": 2}, "distribution": {"type": "pytorch"}}`

// TestARMComponentVersions: Azure's ComponentVersion and
// ComponentContainer routes are environments' handlers over the
// components service: a version PUT through ARM reads back through ARM
// and the native routes, lists as Azure lists, a missing one is Azure's
// 404, a malformed componentSpec is 400 naming the field as sent, and a
// Reader may read but not write.
func TestARMComponentVersions(t *testing.T) {
	e := newTestEnv(t)
	q := "?api-version=2024-04-01"
	send := func(method, path, body string, want int) map[string]any {
		t.Helper()
		resp, out := do(t, e.ts, e.admin, method, armComps+path, body, nil)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, resp.StatusCode, out, want)
		}
		return out
	}
	props := func(m map[string]any) map[string]any { return m["properties"].(map[string]any) }
	body := `{"properties":{"description":"trains","tags":{"team":"vision"},"isAnonymous":false,"componentSpec":` + armTrainSpec + `}}`

	v1 := send("PUT", "/train/versions/1"+q, body, 201)
	if p := props(v1); v1["name"] != "1" || v1["type"] != armasset.ComponentVersionType || p["description"] != "trains" || p["isArchived"] != false ||
		p["provisioningState"] != "Succeeded" || !strings.HasSuffix(v1["id"].(string), "/workspaces/default/components/train/versions/1") {
		t.Fatalf("created: %v", v1)
	}
	// The round trip: GET shows the document as componentSpec.
	got := send("GET", "/train/versions/1"+q, "", 200)
	spec, _ := props(got)["componentSpec"].(map[string]any)
	inputs, _ := spec["inputs"].(map[string]any)
	epochs, _ := inputs["epochs"].(map[string]any)
	if spec["$schema"] != armasset.ComponentSpecSchema || spec["name"] != "train" || spec["version"] != "1" || spec["type"] != "command" ||
		spec["display_name"] != "Train" || spec["environment"] != "azureml:sklearn@latest" || epochs["type"] != "integer" || fmt.Sprint(epochs["default"]) != "10" ||
		!strings.HasPrefix(fmt.Sprint(spec["command"]), "python train.py") || fmt.Sprint(spec["resources"]) != "map[instance_count:2]" ||
		spec["distribution"].(map[string]any)["type"] != "pytorch" || fmt.Sprint(props(got)["tags"]) != "map[team:vision]" {
		t.Fatalf("GET: %v", got)
	}
	if sd, _ := got["systemData"].(map[string]any); sd["createdBy"] == nil || sd["createdAt"] == nil {
		t.Errorf("systemData: %v", got["systemData"])
	}
	// What GET shows PUTs back as the same version (200); archiving it
	// the way the SDKs do, then restoring it.
	send("PUT", "/train/versions/1"+q, jsonOf(t, got), 200)
	props(got)["isArchived"] = true
	if a := send("PUT", "/train/versions/1"+q, jsonOf(t, got), 200); props(a)["isArchived"] != true {
		t.Fatalf("archive: %v", a)
	}
	props(got)["isArchived"] = false
	send("PUT", "/train/versions/1"+q, jsonOf(t, got), 200)
	// Another definition under the version is 409, as natively.
	if resp, out := do(t, e.ts, e.admin, "PUT", armComps+"/train/versions/1"+q, strings.Replace(body, "python train.py", "python other.py", 1), nil); resp.StatusCode != 409 || out["error"].(map[string]any)["code"] != "Conflict" {
		t.Fatalf("another definition: %d %v", resp.StatusCode, out)
	}

	// The native API sees what ARM registered, and the other way round.
	if resp, out := do(t, e.ts, e.admin, "GET", "/api/v1/workspaces/default/components/train/versions/1", "", nil); resp.StatusCode != 200 ||
		out["name"] != "train" || out["description"] != "trains" || out["display_name"] != "Train" {
		t.Fatalf("native GET: %d %v", resp.StatusCode, out)
	}
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/components/train/versions/2", `{"type":"command","command":"python train.py","environment":"azureml:sklearn@latest"}`, 201)
	send("PUT", "/score/versions/1"+q, `{"properties":{"componentSpec":{"type":"command","command":"python score.py","environment":"azureml:sklearn@latest"}}}`, 201)

	// Lists: containers by name, versions newest first.
	names := func(path string) string {
		t.Helper()
		var out []string
		for _, v := range send("GET", path, "", 200)["value"].([]any) {
			out = append(out, v.(map[string]any)["name"].(string))
		}
		return fmt.Sprint(out)
	}
	if got := names(q); got != "[score train]" {
		t.Errorf("containers: %s", got)
	}
	if got := names("/train/versions" + q); got != "[2 1]" {
		t.Errorf("versions: %s", got)
	}
	if got := names("/train/versions" + q + "&$orderBy=CreatedAtAsc"); got != "[1 2]" {
		t.Errorf("versions oldest first: %s", got)
	}
	c := send("GET", "/train"+q, "", 200)
	if p := props(c); c["type"] != armasset.ComponentContainerType || p["latestVersion"] != "2" || p["nextVersion"] != "3" || p["isArchived"] != false ||
		!strings.HasSuffix(c["id"].(string), "/workspaces/default/components/train") {
		t.Fatalf("container: %v", c)
	}

	// Missing: Azure's error envelope, 404.
	for _, p := range []string{"/train/versions/99", "/nope", "/nope/versions/1"} {
		resp, out := do(t, e.ts, e.admin, "GET", armComps+p+q, "", nil)
		errBody, _ := out["error"].(map[string]any)
		if resp.StatusCode != 404 || errBody["code"] == nil || errBody["message"] == nil {
			t.Errorf("GET %s: %d %v, want Azure's 404", p, resp.StatusCode, out)
		}
	}
	// Deleting is refused, as environments'.
	if resp, out := do(t, e.ts, e.admin, "DELETE", armComps+"/train/versions/1"+q, "", nil); resp.StatusCode != 400 || !strings.Contains(fmt.Sprint(out["error"]), "archive") {
		t.Errorf("DELETE: %d %v", resp.StatusCode, out)
	}

	// A malformed componentSpec: 400 naming the field as the caller sent it.
	for b, field := range map[string]string{
		`{"properties":{}}`:                                                                    "properties.componentSpec",
		`{"properties":{"componentSpec":"train.yml"}}`:                                         "properties.componentSpec",
		`{"properties":{"componentSpec":{"type":"command"}}}`:                                  "properties.componentSpec.command",
		`{"properties":{"componentSpec":{"command":"x","colour":"red"}}}`:                      "properties.componentSpec.colour",
		`{"properties":{"componentSpec":{"command":"x","inputs":{"a":{"type":"tensor"}}}}}`:    "properties.componentSpec.inputs.a.type",
		`{"properties":{"componentSpec":{"command":"python x.py ${{inputs.missing}}"}}}`:       "properties.componentSpec.command",
		`{"properties":{"componentSpec":{"type":"pipeline","command":"x"}}}`:                   "properties.componentSpec.type",
		`{"properties":{"componentSpec":{"name":"other","command":"x"}}}`:                      "properties.componentSpec.name",
		`{"properties":{"componentSpec":{"version":"2","command":"x"}}}`:                       "properties.componentSpec.version",
		`{"properties":{"componentSpec":{"command":"x","code":"./src"}}}`:                      "properties.componentSpec.code",
		`{"properties":{"isAnonymous":true,"componentSpec":{"command":"x"}}}`:                  "properties.isAnonymous",
		`{"properties":{"properties":{"a":"b"},"componentSpec":{"command":"x"}}}`:              "properties.properties",
		`{"properties":{"tags":{"a/b":"c"},"componentSpec":{"command":"x"}}}`:                  "properties.tags.a/b",
		`{"properties":{"description":"a","componentSpec":{"description":"b","command":"x"}}}`: "properties.componentSpec.description",
	} {
		resp, out := do(t, e.ts, e.admin, "PUT", armComps+"/bad/versions/1"+q, b, nil)
		errBody, _ := out["error"].(map[string]any)
		if resp.StatusCode != 400 || errBody["target"] != field || !strings.HasPrefix(fmt.Sprint(errBody["message"]), field+":") {
			t.Errorf("%s: %d %v, want 400 naming %s", b, resp.StatusCode, out, field)
		}
	}
	if resp, _ := do(t, e.ts, e.admin, "GET", "/api/v1/workspaces/default/components/bad/versions/1", "", nil); resp.StatusCode != 404 {
		t.Errorf("a refused version was registered: %d", resp.StatusCode)
	}

	// A Reader reads and may not write, as on the native routes.
	reader := addUser(t, e, "rita", identity.RoleReader)
	for _, p := range []string{"", "/train", "/train/versions", "/train/versions/1"} {
		if resp, _ := do(t, e.ts, reader, "GET", armComps+p+q, "", nil); resp.StatusCode != 200 {
			t.Errorf("Reader GET %s: %d", p, resp.StatusCode)
		}
	}
	for _, m := range []string{"PUT", "DELETE"} {
		for _, p := range []string{"/train/versions/3", "/train"} {
			if resp, _ := do(t, e.ts, reader, m, armComps+p+q, body, nil); resp.StatusCode != 403 {
				t.Errorf("Reader %s %s: %d", m, p, resp.StatusCode)
			}
		}
	}
	if resp, _ := do(t, e.ts, e.admin, "GET", armComps+"/train/versions/3"+q, "", nil); resp.StatusCode != 404 {
		t.Errorf("the Reader's PUT registered a version: %d", resp.StatusCode)
	}
}

// TestARMComponentSpecRoundTrip: a componentSpec of every key Shoal keeps
// reads back as it was written, so that the SDKs' archive (a PUT of what
// they read) is the same version.
func TestARMComponentSpecRoundTrip(t *testing.T) {
	e := newTestEnv(t)
	q := "?api-version=2024-04-01"
	spec := `{"type":"command","description":"d","tags":{"k":"v"},"is_deterministic":false,
		"command":"python x.py $[[--lr ${{inputs.lr}}]] --mode ${{inputs.mode}} ${{outputs.out}}",
		"inputs":{"lr":{"type":"number","optional":true,"min":0,"max":1,"description":"rate"},"mode":{"type":"string","enum":["a","b"],"default":"a"}},
		"outputs":{"out":{"type":"uri_file","mode":"upload","description":"o"}},
		"environment":{"image":"python:3.11"},"environment_variables":{"A":"1"},
		"resources":{"instance_count":1,"instance_type":"cpu","shm_size":"2g"},"distribution":{"type":"mpi","process_count_per_instance":2}}`
	resp, put := do(t, e.ts, e.admin, "PUT", armComps+"/rt/versions/1"+q, `{"properties":{"componentSpec":`+spec+`}}`, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("PUT: %d %v", resp.StatusCode, put)
	}
	_, got := do(t, e.ts, e.admin, "GET", armComps+"/rt/versions/1"+q, "", nil)
	var want map[string]any
	if err := json.Unmarshal([]byte(spec), &want); err != nil {
		t.Fatal(err)
	}
	gotSpec := got["properties"].(map[string]any)["componentSpec"].(map[string]any)
	for k, v := range want {
		if fmt.Sprint(gotSpec[k]) != fmt.Sprint(v) {
			t.Errorf("componentSpec.%s = %v, want %v", k, gotSpec[k], v)
		}
	}
	if resp, out := do(t, e.ts, e.admin, "PUT", armComps+"/rt/versions/1"+q, jsonOf(t, got), nil); resp.StatusCode != 200 {
		t.Errorf("PUT of what GET showed: %d %v", resp.StatusCode, out)
	}
}
