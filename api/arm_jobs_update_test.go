package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// withProps returns an ARM job body with properties changed by set.
func withProps(t *testing.T, body string, set func(p map[string]any)) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	set(m["properties"].(map[string]any))
	return mustJSON(m)
}

// TestARMJobUpdate, written first: a PUT of an existing job that
// changes its description, tags or display name updates them (200), as
// Azure does, for command, sweep and pipeline jobs alike; a PUT that
// changes anything else is 409 in Azure's envelope naming the field,
// and nothing of it is kept (not even its new description).
func TestARMJobUpdate(t *testing.T) {
	e := newTestEnv(t)
	q := "?api-version=2023-04-01-preview"
	call := armCaller(t, e, q)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/cpu", `{"name":"cpu","size":"Standard_DS3_v2","max_instances":2}`, http.StatusCreated)
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/computes/gpu", `{"name":"gpu","size":"Standard_DS3_v2","max_instances":2}`, http.StatusCreated)
	call(e.admin, "PUT", "/environments/CliV2AnonymousEnvironment/versions/0123456789abcdef0123456789abcdef", `{"properties":{"image":"python:3.11-slim","isAnonymous":true}}`, http.StatusCreated)

	first := armGolden(t, "command.json")
	call(e.admin, "PUT", "/jobs/upd", first, http.StatusCreated)
	changed := withProps(t, first, func(p map[string]any) {
		p["description"] = "second thoughts"
		p["displayName"] = "renamed"
		p["tags"] = map[string]any{"stage": "review"}
	})
	got := props(call(e.admin, "PUT", "/jobs/upd", changed, http.StatusOK))
	if got["description"] != "second thoughts" || got["displayName"] != "renamed" || mustJSON(got["tags"]) != `{"stage":"review"}` {
		t.Errorf("PUT answered %v", got)
	}
	native := mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/upd", "", 200).json(t)
	if native["description"] != "second thoughts" || native["display_name"] != "renamed" || mustJSON(native["tags"]) != `{"stage":"review"}` {
		t.Errorf("the job after the update: %v", native)
	}
	// The same body again: 200, nothing changes.
	call(e.admin, "PUT", "/jobs/upd", changed, http.StatusOK)
	// The job as GET answers it, with a tag added (what azure-ai-ml's
	// get, change, create_or_update sends): an update.
	back := call(e.admin, "GET", "/jobs/upd", "", 200)
	props(back)["tags"].(map[string]any)["round"] = "trip"
	if p := props(call(e.admin, "PUT", "/jobs/upd", mustJSON(back), http.StatusOK)); mustJSON(p["tags"]) != `{"round":"trip","stage":"review"}` {
		t.Errorf("a GET's body PUT back with a tag: %v", p)
	}

	// Anything else: 409 naming the field, nothing kept.
	for field, body := range map[string]string{
		"properties.command": withProps(t, changed, func(p map[string]any) { p["command"] = "echo changed"; p["description"] = "not kept" }),
		"properties.computeId": withProps(t, changed, func(p map[string]any) {
			p["computeId"] = strings.Replace(p["computeId"].(string), "/cpu", "/gpu", 1)
			p["description"] = "not kept"
		}),
		"properties.environmentVariables": withProps(t, changed, func(p map[string]any) { p["environmentVariables"] = map[string]any{"X": "2"} }),
		"properties.experimentName":       withProps(t, changed, func(p map[string]any) { p["experimentName"] = "elsewhere" }),
	} {
		resp, out := do(t, e.ts, e.admin, "PUT", armWS+"/jobs/upd"+q, body, nil)
		errObj, _ := out["error"].(map[string]any)
		msg, _ := errObj["message"].(string)
		if resp.StatusCode != http.StatusConflict || errObj["code"] != "Conflict" || errObj["target"] != field || !strings.Contains(msg, field) {
			t.Errorf("a PUT changing %s: %d %v, want 409 Conflict naming it", field, resp.StatusCode, out)
		}
	}
	native = mustSend(t, e, e.admin, "GET", "/api/v1/workspaces/default/jobs/upd", "", 200).json(t)
	if native["description"] != "second thoughts" || native["compute"] != "cpu" || !strings.HasPrefix(native["command"].(string), "echo hello") {
		t.Errorf("the job after refused PUTs: %v", native)
	}

	// A sweep: its description and tags too.
	sweep := armGolden(t, "sweep.json")
	call(e.admin, "PUT", "/jobs/sweep-upd", sweep, http.StatusCreated)
	p := props(call(e.admin, "PUT", "/jobs/sweep-upd", withProps(t, sweep, func(p map[string]any) {
		p["description"] = "tuned"
		p["tags"] = map[string]any{"best": "yes"}
	}), http.StatusOK))
	if p["description"] != "tuned" || mustJSON(p["tags"]) != `{"best":"yes"}` {
		t.Errorf("sweep update answered %v", p)
	}
	resp, out := do(t, e.ts, e.admin, "PUT", armWS+"/jobs/sweep-upd"+q, withProps(t, sweep, func(p map[string]any) {
		p["limits"].(map[string]any)["maxTotalTrials"] = 9
	}), nil)
	if errObj, _ := out["error"].(map[string]any); resp.StatusCode != http.StatusConflict || errObj["target"] != "properties.limits" {
		t.Errorf("a sweep's limits changed: %d %v, want 409 on properties.limits", resp.StatusCode, out)
	}

	// A Reader updates nothing.
	reader := addUser(t, e, "rita", "Reader")
	call(reader, "PUT", "/jobs/upd", withProps(t, changed, func(p map[string]any) { p["description"] = "rita's" }), http.StatusForbidden)
	if r := send(t, e, reader, "PATCH", "/api/v1/workspaces/default/jobs/upd", `{"description":"rita's"}`, nil); r.status != http.StatusForbidden {
		t.Errorf("a Reader's PATCH: %s, want 403", r)
	}

	// The native update (`shoal job update`): tags set and removed.
	nj := mustSend(t, e, e.admin, "PATCH", "/api/v1/workspaces/default/jobs/upd", `{"set_tags":{"owner":"carl"},"remove_tags":["round"],"display_name":"final"}`, http.StatusOK).json(t)
	if mustJSON(nj["tags"]) != `{"owner":"carl","stage":"review"}` || nj["display_name"] != "final" || nj["description"] != "second thoughts" {
		t.Errorf("PATCH answered %v", nj)
	}
	for body, field := range map[string]string{
		`{"command":"rm -rf /"}`:                              "command",
		`{"set_tags":{"a/b":"x"}}`:                            "tags.a/b",
		`{"description":"` + strings.Repeat("d", 6000) + `"}`: "description",
	} {
		r := send(t, e, e.admin, "PATCH", "/api/v1/workspaces/default/jobs/upd", body, nil)
		if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), field) {
			t.Errorf("PATCH %.40s: %s, want 400 naming %s", body, r, field)
		}
	}
	mustSend(t, e, e.admin, "PATCH", "/api/v1/workspaces/default/jobs/no-such-job", `{"description":"x"}`, http.StatusNotFound)
}
