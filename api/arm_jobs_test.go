package api_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm"
)

const armWS = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"

// armGolden reads a body azure-ai-ml 1.4.0 sends (arm/testdata/jobs).
// armCaller calls an ARM route of the default workspace with api-version
// query q and fails the test unless it answers want.
func armCaller(t *testing.T, e *testEnv, q string) func(tok, method, path, body string, want int) map[string]any {
	return func(tok, method, path, body string, want int) map[string]any {
		t.Helper()
		resp, out := do(t, e.ts, tok, method, armWS+path+q, body, nil)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, resp.StatusCode, out, want)
		}
		return out
	}
}

// props is an ARM resource's properties.
func props(m map[string]any) map[string]any { p, _ := m["properties"].(map[string]any); return p }

func armGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../arm/testdata/jobs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestARMJobs: Azure's job routes submit the bodies azure-ai-ml sends
// (a command() with an anonymous environment, a .sweep(), a
// @dsl.pipeline of registered components) through the one submit path,
// answer them in Azure's shape, list them with jobType and tag filters,
// cancel one; a job is never deleted; refusals name the field and store
// nothing.
func TestARMJobs(t *testing.T) {
	e := newTestEnv(t)
	q := "?api-version=2023-04-01-preview"
	call := armCaller(t, e, q)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cpu", `{"name":"cpu","size":"Standard_DS3_v2","max_instances":2}`, http.StatusCreated)

	// The inline Environment(image=…) of a command(): an anonymous
	// version, answered as such and left out of the list.
	const anon = "/environments/CliV2AnonymousEnvironment/versions/0123456789abcdef0123456789abcdef"
	call(e.admin, "PUT", anon, `{"properties":{"image":"python:3.11-slim","isAnonymous":true,"isArchived":false,"properties":{}}}`, http.StatusCreated)
	if p := props(call(e.admin, "GET", anon, "", 200)); p["isAnonymous"] != true || p["image"] != "python:3.11-slim" {
		t.Errorf("anonymous version: %v", p)
	}
	call(e.admin, "PUT", "/environments/sdk-env/versions/1", `{"properties":{"image":"python:3.11"}}`, http.StatusCreated)
	if list := call(e.admin, "GET", "/environments", "", 200); strings.Contains(mustJSON(list), "CliV2Anonymous") || !strings.Contains(mustJSON(list), "sdk-env") {
		t.Errorf("environment containers: %v", list)
	}
	if out := call(e.admin, "PUT", "/environments/mine/versions/1", `{"properties":{"image":"x","isAnonymous":true}}`, 400); !strings.Contains(mustJSON(out), "properties.isAnonymous") {
		t.Errorf("anonymous under another name: %v", out)
	}

	// command(): 201, then 200 for the same body again.
	j := call(e.admin, "PUT", "/jobs/job-one", armGolden(t, "command.json"), http.StatusCreated)
	p := props(j)
	studio, _ := props(map[string]any{"properties": p["services"]})["Studio"].(map[string]any)
	if j["name"] != "job-one" || j["id"] != armWS+"/jobs/job-one" || p["jobType"] != "Command" || p["computeId"] != armWS+"/computes/cpu" ||
		p["environmentId"] != armWS+anon || studio["endpoint"] != "http://shoal.test/jobs/job-one?workspace=default" {
		t.Errorf("PUT answered %v", j)
	}
	switch p["status"] {
	case "NotStarted", "Queued", "Preparing", "Running":
	default:
		t.Errorf("status %v", p["status"])
	}
	call(e.admin, "PUT", "/jobs/job-one", armGolden(t, "command.json"), http.StatusOK)
	// The native API shows the same job: one submit path.
	native := mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/job-one", "", 200).json(t)
	if native["compute"] != "cpu" || native["environment"] != "azureml:CliV2AnonymousEnvironment:0123456789abcdef0123456789abcdef" || native["display_name"] != "hello" {
		t.Errorf("native job: %v", native)
	}
	if got := props(call(e.admin, "GET", "/jobs/job-one", "", 200)); got["command"] != p["command"] || got["services"] == nil {
		t.Errorf("GET: %v", got)
	}

	// @latest, as an id or as the container's ARM id: the newest version,
	// resolved at submit.
	for name, env := range map[string]string{"latest-one": "azureml:sdk-env@latest", "latest-two": armWS + "/environments/sdk-env"} {
		call(e.admin, "PUT", "/jobs/"+name, `{"properties":{"jobType":"Command","command":"true","computeId":"cpu","environmentId":"`+env+`"}}`, http.StatusCreated)
		nj := mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/"+name, "", 200).json(t)
		if re, _ := nj["resolved_environment"].(map[string]any); nj["environment"] != "azureml:sdk-env@latest" || re["image"] != "python:3.11" {
			t.Errorf("%s: environment %v resolved %v", name, nj["environment"], nj["resolved_environment"])
		}
	}

	// .sweep() and a @dsl.pipeline of registered components.
	call(e.admin, "PUT", "/jobs/sweep-one", armGolden(t, "sweep.json"), http.StatusCreated)
	for _, c := range []struct{ name, spec string }{
		{"prep", `{"type":"command","command":"mkdir -p ${{outputs.out}}","environment":"azureml:sdk-env:1","outputs":{"out":{"type":"uri_folder"}}}`},
		{"train", `{"type":"command","command":"ls ${{inputs.data}}; echo ${{inputs.k}}","environment":"azureml:sdk-env:1","inputs":{"data":{"type":"uri_folder"},"k":{"type":"integer"}}}`},
	} {
		call(e.admin, "PUT", "/components/"+c.name+"/versions/1", `{"properties":{"componentSpec":`+c.spec+`}}`, http.StatusCreated)
	}
	// A @dsl.pipeline's command components, as azure-ai-ml registers
	// them: anonymous versions of azureml_anonymous (a GUID version).
	const anonComp = "/components/azureml_anonymous/versions/6c7f6a5c-0000-4000-8000-000000000000"
	call(e.admin, "PUT", anonComp, `{"properties":{"properties":{},"tags":{},"isAnonymous":true,"isArchived":false,"componentSpec":{"command":"mkdir -p ${{outputs.out}}","environment":"azureml:sdk-env:1","name":"azureml_anonymous","version":"6c7f6a5c-0000-4000-8000-000000000000","is_deterministic":true,"outputs":{"out":{"type":"uri_folder"}},"type":"command","_source":"BUILDER"}}}`, http.StatusCreated)
	// A command() built with code and outputs keeps its own name and
	// version "1" in its spec; the URL's version (its hash) names it.
	call(e.admin, "PUT", "/components/azureml_anonymous/versions/0f7dff7b-40c1-7e13-b9f1-ab0e4038e2d4", `{"properties":{"isAnonymous":true,"componentSpec":{"command":"echo","environment":"azureml:sdk-env:1","name":"prep","version":"1","type":"command"}}}`, http.StatusCreated)
	if p := props(call(e.admin, "GET", anonComp, "", 200)); p["isAnonymous"] != true {
		t.Errorf("anonymous component: %v", p)
	}
	if list := call(e.admin, "GET", "/components", "", 200); strings.Contains(mustJSON(list), "azureml_anonymous") {
		t.Errorf("component containers: %v", list)
	}
	pipe := call(e.admin, "PUT", "/jobs/pipe-one", armGolden(t, "pipeline.json"), http.StatusCreated)
	if jobs, _ := props(pipe)["jobs"].(map[string]any); len(jobs) != 2 || props(pipe)["jobType"] != "Pipeline" {
		t.Errorf("pipeline: %v", pipe)
	}

	// Lists: the workspace's jobs, not the pipeline's steps or the
	// sweep's trials; jobType and tag filters.
	names := func(query string) string {
		t.Helper()
		resp, out := do(t, e.ts, e.admin, "GET", armWS+"/jobs"+q+query, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("list %s: %d %v", query, resp.StatusCode, out)
		}
		var n []string
		for _, v := range out["value"].([]any) {
			n = append(n, v.(map[string]any)["name"].(string))
		}
		return strings.Join(n, ",")
	}
	if got := names(""); !strings.Contains(got, "job-one") || !strings.Contains(got, "sweep-one") || !strings.Contains(got, "pipe-one") || strings.Count(got, ",") != 4 {
		t.Errorf("list: %s", got)
	}
	if got := names("&jobType=Sweep"); got != "sweep-one" {
		t.Errorf("jobType=Sweep: %s", got)
	}
	if got := names("&tag=team"); got != "job-one" {
		t.Errorf("tag=team: %s", got)
	}
	if got := names("&listViewType=ArchivedOnly"); got != "" {
		t.Errorf("archived: %s", got)
	}
	call(e.admin, "GET", "/jobs?jobType=AutoML&x=", "", 400)

	// Cancel (202), then the job is on its way to Canceled; never deleted.
	call(e.admin, "POST", "/jobs/job-one/cancel", "", http.StatusAccepted)
	st := props(call(e.admin, "GET", "/jobs/job-one", "", 200))["status"]
	if st != "Canceled" && st != "CancelRequested" {
		t.Errorf("after cancel: %v", st)
	}
	// The cancel's Location: 202 while the job has not ended, 200 once it
	// has (what begin_cancel(...).wait() polls).
	want := http.StatusAccepted
	if st == "Canceled" {
		want = http.StatusOK
	}
	call(e.admin, "GET", "/jobs/job-one/operations/cancel", "", want)
	call(e.admin, "GET", "/jobs/no-such-job/operations/cancel", "", 404)
	if out := call(e.admin, "DELETE", "/jobs/job-one", "", 400); !strings.Contains(mustJSON(out), "not deleted") {
		t.Errorf("DELETE: %v", out)
	}
	call(e.admin, "DELETE", "/jobs/no-such-job", "", 404)
	call(e.admin, "POST", "/jobs/no-such-job/cancel", "", 404)

	// Refusals: Azure's envelope naming the field; nothing stored.
	other := strings.Replace(armWS, "/workspaces/default", "/workspaces/other", 1)
	for _, c := range []struct{ body, field string }{
		{`{"properties":{"jobType":"Command","command":"x","computeId":"` + other + `/computes/cpu","environmentId":"azureml:sdk-env:1"}}`, "properties.computeId"},
		{`{"properties":{"jobType":"Teleport"}}`, "properties.jobType"},
		{`{"properties":{"jobType":"AutoML","taskDetails":{}}}`, "properties.jobType"},
		{`{"properties":{"jobType":"Command","command":"x","computeId":"cpu","environmentId":"azureml:no-such-env:1"}}`, "properties.environmentId"},
		{`{"properties":{"jobType":"Command","command":"","computeId":"cpu","environmentId":"azureml:sdk-env:1"}}`, "properties.command"},
	} {
		resp, out := do(t, e.ts, e.admin, "PUT", armWS+"/jobs/bad-one"+q, c.body, nil)
		errObj, _ := out["error"].(map[string]any)
		if resp.StatusCode/100 != 4 || errObj["target"] != c.field || errObj["code"] == "" || errObj["message"] == "" {
			t.Errorf("%s: %d %v, want a 4xx on %s", c.body, resp.StatusCode, out, c.field)
		}
	}
	call(e.admin, "GET", "/jobs/bad-one", "", 404)

	// Roles: a Reader reads jobs but submits and cancels none.
	reader := addUser(t, e, "rita", "Reader")
	call(reader, "GET", "/jobs/job-one", "", 200)
	call(reader, "PUT", "/jobs/job-two", armGolden(t, "command.json"), http.StatusForbidden)
	call(reader, "POST", "/jobs/sweep-one/cancel", "", http.StatusForbidden)
}

// TestMLAudienceToken: azure-ai-ml asks for https://ml.azure.com/.default
// and refuses a token whose aud is not exactly https://ml.azure.com
// (pipelines and user-identity jobs); Resource Manager's keeps its slash.
func TestMLAudienceToken(t *testing.T) {
	e := newTestEnv(t)
	resp, created := do(t, e.ts, e.admin, "POST", "/api/v1/serviceprincipals", `{"name":"sdk"}`, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, created)
	}
	id, secret := created["client_id"].(string), created["client_secret"].(string)
	for scope, aud := range map[string]string{
		"https://ml.azure.com/.default":         "https://ml.azure.com",
		"https://ml.azure.com//.default":        "https://ml.azure.com",
		"https://management.azure.com/.default": "https://management.azure.com/",
	} {
		status, body := postToken(t, e, "/adfs/oauth2/token", grant(id, secret, scope))
		tok, _ := body["access_token"].(string)
		parts := strings.Split(tok, ".")
		if status != 200 || len(parts) != 3 {
			t.Fatalf("%s: %d %v", scope, status, body)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var claims map[string]any
		json.Unmarshal(raw, &claims)
		if claims["aud"] != aud {
			t.Errorf("%s: aud %v, want %s", scope, claims["aud"], aud)
		}
	}
}

// TestARMJobsPaging: the job list comes in pages of arm.PageSize, newest
// first, with an absolute nextLink on the server's URL that carries the
// filters; a forged $skip is refused naming it.
func TestARMJobsPaging(t *testing.T) {
	e := newTestEnv(t)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cpu", `{"name":"cpu","size":"Standard_DS3_v2","max_instances":2}`, http.StatusCreated)
	const n = arm.PageSize + 2
	for i := 0; i < n; i++ {
		mustSend(t, e, e.admin, "PUT", fmt.Sprintf("/api/v1/workspaces/default/jobs/j%02d", i), `{"command":"true","compute":"cpu","tags":{"k":"v"}}`, http.StatusCreated)
	}
	path := armWS + "/jobs?api-version=2024-01-01-preview&jobType=Command&tag=k%3Dv"
	var seen []string
	for pages := 0; path != ""; pages++ {
		if pages > 2 {
			t.Fatalf("more pages than %d jobs need", n)
		}
		resp, out := do(t, e.ts, e.admin, "GET", path, "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, out)
		}
		for _, v := range out["value"].([]any) {
			seen = append(seen, v.(map[string]any)["name"].(string))
		}
		next, _ := out["nextLink"].(string)
		if next != "" && (!strings.HasPrefix(next, "http://shoal.test"+armWS+"/jobs?") || !strings.Contains(next, "jobType=Command") || !strings.Contains(next, "tag=k%3Dv")) {
			t.Fatalf("nextLink %s", next)
		}
		path = strings.TrimPrefix(next, "http://shoal.test")
	}
	if len(seen) != n || seen[0] != fmt.Sprintf("j%02d", n-1) || seen[n-1] != "j00" {
		t.Errorf("listed %d jobs: %v", len(seen), seen)
	}
	if resp, out := do(t, e.ts, e.admin, "GET", armWS+"/jobs?api-version=2024-01-01-preview&$skip=forged", "", nil); resp.StatusCode != 400 || !strings.Contains(mustJSON(out), "$skip") {
		t.Errorf("forged $skip: %d %v", resp.StatusCode, out)
	}
}
