package api_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm"
	"github.com/shoal-ml/shoal/arm/armasset"
	"github.com/shoal-ml/shoal/domain/identity"
)

const armEnvs = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/environments"

// buildContext is a gzipped tar holding a Dockerfile, as the CLI uploads
// a build context.
func buildContext(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	df := []byte("FROM python:3.11\n")
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(df)
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// TestARMEnvironmentVersions: Azure's EnvironmentVersion and
// EnvironmentContainer routes register, read, list, archive and restore
// what the native routes and `shoal environment` see; a version never
// changes (409), is never deleted (400, archive instead), and fields
// Shoal cannot keep are refused naming them.
func TestARMEnvironmentVersions(t *testing.T) {
	e := newTestEnv(t)
	q := "?api-version=2024-04-01"
	put := func(path, body string, want int) map[string]any {
		t.Helper()
		resp, out := do(t, e.ts, e.admin, "PUT", armEnvs+path+q, body, nil)
		if resp.StatusCode != want {
			t.Fatalf("PUT %s: %d %v, want %d", path, resp.StatusCode, out, want)
		}
		return out
	}
	get := func(path string, want int) map[string]any {
		t.Helper()
		resp, out := do(t, e.ts, e.admin, "GET", armEnvs+path, "", nil)
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d %v, want %d", path, resp.StatusCode, out, want)
		}
		return out
	}
	props := func(m map[string]any) map[string]any { return m["properties"].(map[string]any) }

	v1 := put("/train/versions/1", `{"properties":{"image":"python:3.11","condaFile":"dependencies: [numpy]","description":"first","tags":{"team":"vision"},"osType":"Linux"}}`, 201)
	if p := props(v1); v1["name"] != "1" || v1["type"] != armasset.EnvironmentVersionType || p["image"] != "python:3.11" || p["isArchived"] != false ||
		p["environmentType"] != "UserCreated" || p["osType"] != "Linux" || p["description"] != "first" || !strings.HasSuffix(v1["id"].(string), "/workspaces/default/environments/train/versions/1") {
		t.Fatalf("created: %v", v1)
	}
	// The same definition again is the same version (200); another is 409.
	put("/train/versions/1", `{"properties":{"image":"python:3.11","condaFile":"dependencies: [numpy]","description":"first","tags":{"team":"vision"}}}`, 200)
	if resp, out := do(t, e.ts, e.admin, "PUT", armEnvs+"/train/versions/1"+q, `{"properties":{"image":"python:3.12"}}`, nil); resp.StatusCode != 409 || out["error"].(map[string]any)["code"] != "Conflict" {
		t.Fatalf("another definition: %d %v", resp.StatusCode, out)
	}
	put("/train/versions/2", `{"properties":{"image":"python:3.12"}}`, 201)

	// The native API sees what ARM registered, and the other way round.
	if resp, out := do(t, e.ts, e.admin, "GET", "/api/v1/workspaces/default/environments/train/labels/latest", "", nil); resp.StatusCode != 200 || out["version"] != "2" {
		t.Fatalf("native latest: %d %v", resp.StatusCode, out)
	}
	mustSend(t, e, e.admin, "PUT", "/api/v1/workspaces/default/environments/train/versions/7", `{"image":"python:3.13"}`, 201)
	c := get("/train"+q, 200)
	if p := props(c); c["name"] != "train" || c["type"] != armasset.EnvironmentContainerType || p["latestVersion"] != "7" || p["nextVersion"] != "8" || p["isArchived"] != false {
		t.Fatalf("container: %v", c)
	}

	// Archive a version by PUTting it back with isArchived, as the SDKs do.
	got := get("/train/versions/7"+q, 200)
	props(got)["isArchived"] = true
	if a := put("/train/versions/7", jsonOf(t, got), 200); props(a)["isArchived"] != true {
		t.Fatalf("archive: %v", a)
	}
	versions := func(query string) []string {
		t.Helper()
		var out []string
		for _, v := range get("/train/versions"+q+query, 200)["value"].([]any) {
			out = append(out, v.(map[string]any)["name"].(string))
		}
		return out
	}
	for query, want := range map[string]string{
		"":                               "[2 1]",
		"&listViewType=All":              "[7 2 1]",
		"&listViewType=ArchivedOnly":     "[7]",
		"&$orderBy=CreatedAtAsc":         "[1 2]",
		"&$orderBy=CreatedAtDesc&$top=1": "[2]",
	} {
		if got := fmt.Sprint(versions(query)); got != want {
			t.Errorf("versions%s = %s, want %s", query, got, want)
		}
	}
	if p := props(get("/train"+q, 200)); p["latestVersion"] != "2" || p["nextVersion"] != "8" {
		t.Errorf("container after the archive: %v", p)
	}

	// Archiving the container archives every version; it leaves the
	// active list and shows in the archived one. Restoring brings all back.
	c = get("/train"+q, 200)
	props(c)["isArchived"] = true
	if a := put("/train", jsonOf(t, c), 200); props(a)["isArchived"] != true {
		t.Fatalf("archive the container: %v", a)
	}
	put("/other/versions/1", `{"properties":{"image":"python:3.11"}}`, 201)
	names := func(query string) string {
		var out []string
		for _, v := range get(q+query, 200)["value"].([]any) {
			out = append(out, v.(map[string]any)["name"].(string))
		}
		return fmt.Sprint(out)
	}
	if a, all, archived := names(""), names("&listViewType=All"), names("&listViewType=ArchivedOnly"); a != "[other]" || all != "[other train]" || archived != "[train]" {
		t.Errorf("containers: active %s, all %s, archived %s", a, all, archived)
	}
	if resp, _ := do(t, e.ts, e.admin, "GET", "/api/v1/workspaces/default/environments/train/labels/latest", "", nil); resp.StatusCode != 404 {
		t.Errorf("@latest of an archived environment: %d", resp.StatusCode)
	}
	props(c)["isArchived"] = false
	put("/train", jsonOf(t, c), 200)
	if fmt.Sprint(versions("")) != "[7 2 1]" {
		t.Errorf("after the restore: %v", versions(""))
	}

	// Deleting is refused (Azure ML archives), after a 404 for nothing.
	for _, p := range []string{"/train/versions/1", "/train"} {
		if resp, out := do(t, e.ts, e.admin, "DELETE", armEnvs+p+q, "", nil); resp.StatusCode != 400 || !strings.Contains(fmt.Sprint(out["error"]), "archive") {
			t.Errorf("DELETE %s: %d %v", p, resp.StatusCode, out)
		}
	}
	if resp, _ := do(t, e.ts, e.admin, "DELETE", armEnvs+"/train/versions/99"+q, "", nil); resp.StatusCode != 404 {
		t.Errorf("DELETE of a missing version: %d", resp.StatusCode)
	}
	get("/train/versions/1"+q, 200)
	get("/nope"+q, 404)
	get("/train/versions/99"+q, 404)
	if resp, out := do(t, e.ts, e.admin, "PUT", armEnvs+"/fresh"+q, `{"properties":{}}`, nil); resp.StatusCode != 400 || !strings.Contains(fmt.Sprint(out), "first version") {
		t.Errorf("PUT of a container with no version: %d %v", resp.StatusCode, out)
	}

	// Bad input: 400 naming the field as the caller sent it.
	for body, field := range map[string]string{
		`{"properties":{"build":{"contextUri":"https://acct.blob.core.windows.net/c/ctx/"}}}`:             "properties.build.contextUri",
		`{"properties":{"image":"Python:3.11"}}`:                                                          "properties.image",
		`{"properties":{"condaFile":"x"}}`:                                                                "properties.image",
		`{"properties":{"image":"python:3.11","osType":"Windows"}}`:                                       "properties.osType",
		`{"properties":{"image":"python:3.11","inferenceConfig":{"scoringRoute":{"path":"/","port":1}}}}`: "properties.inferenceConfig",
		`{"properties":{"image":"python:3.11","autoRebuild":"OnBaseImageUpdate"}}`:                        "properties.autoRebuild",
		`{"properties":{"image":"python:3.11","isAnonymous":true}}`:                                       "properties.isAnonymous",
		`{"properties":{"image":"python:3.11","tags":{"a/b":"c"}}}`:                                       "properties.tags.a/b",
		`{"properties":{"build":{"contextUri":"sha256:` + strings.Repeat("a", 64) + `"}}}`:                "properties.build.contextUri",
	} {
		resp, out := do(t, e.ts, e.admin, "PUT", armEnvs+"/bad/versions/1"+q, body, nil)
		errBody, _ := out["error"].(map[string]any)
		if resp.StatusCode != 400 || errBody["target"] != field || !strings.HasPrefix(fmt.Sprint(errBody["message"]), field+":") {
			t.Errorf("%s: %d %v, want 400 naming %s", body, resp.StatusCode, out, field)
		}
	}
	for query, field := range map[string]string{"&listViewType=Some": "listViewType", "&$orderBy=name": "$orderBy", "&$top=0": "$top", "&$skip=bm9wZQ": "$skip"} {
		if resp, out := do(t, e.ts, e.admin, "GET", armEnvs+"/train/versions"+q+query, "", nil); resp.StatusCode != 400 || out["error"].(map[string]any)["target"] != field {
			t.Errorf("%s: %d %v", query, resp.StatusCode, out)
		}
	}

	// A build context uploaded to the workspace is taken by its id.
	r := mustSend(t, e, e.admin, "POST", "/api/v1/workspaces/default/artifacts", string(buildContext(t)), http.StatusCreated)
	id, _ := r.json(t)["id"].(string)
	b := put("/built/versions/1", `{"properties":{"build":{"contextUri":"`+id+`"}}}`, 201)
	if bc, _ := props(b)["build"].(map[string]any); bc["contextUri"] != id || bc["dockerfilePath"] != "Dockerfile" {
		t.Errorf("build version: %v", b)
	}
	if resp, out := do(t, e.ts, e.admin, "PUT", armEnvs+"/built/versions/2"+q, `{"properties":{"build":{"contextUri":"`+id+`","dockerfilePath":"docker/Dockerfile"}}}`, nil); resp.StatusCode != 400 || out["error"].(map[string]any)["target"] != "properties.build.dockerfilePath" {
		t.Errorf("a Dockerfile not in the context: %d %v", resp.StatusCode, out)
	}

	// A Reader reads and may not write, as on the native routes.
	reader := addUser(t, e, "rita", identity.RoleReader)
	if resp, _ := do(t, e.ts, reader, "GET", armEnvs+"/train/versions/1"+q, "", nil); resp.StatusCode != 200 {
		t.Errorf("Reader GET: %d", resp.StatusCode)
	}
	for _, m := range []string{"PUT", "DELETE"} {
		if resp, _ := do(t, e.ts, reader, m, armEnvs+"/train/versions/3"+q, `{"properties":{"image":"python:3.11"}}`, nil); resp.StatusCode != 403 {
			t.Errorf("Reader %s: %d", m, resp.StatusCode)
		}
	}
}

// TestARMEnvironmentVersionPages: versions come in pages of arm.PageSize
// with an absolute nextLink that keeps the list's query; $top bounds the
// whole list, across pages.
func TestARMEnvironmentVersionPages(t *testing.T) {
	e := newTestEnv(t)
	n := arm.PageSize + 5
	for i := 1; i <= n; i++ {
		mustSend(t, e, e.admin, "PUT", fmt.Sprintf("/api/v1/workspaces/default/environments/paged/versions/%d", i), `{"image":"python:3.11"}`, http.StatusCreated)
	}
	follow := func(first string) []string {
		t.Helper()
		var out []string
		for next := first; next != ""; {
			resp, body := do(t, e.ts, e.admin, "GET", strings.TrimPrefix(next, "http://shoal.test"), "", nil)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d %v", next, resp.StatusCode, body)
			}
			for _, v := range body["value"].([]any) {
				out = append(out, v.(map[string]any)["name"].(string))
			}
			next, _ = body["nextLink"].(string)
			if next != "" && !strings.HasPrefix(next, "http://shoal.test"+armEnvs+"/paged/versions?") {
				t.Fatalf("nextLink %q", next)
			}
		}
		return out
	}
	all := follow(armEnvs + "/paged/versions?api-version=2024-04-01&$orderBy=CreatedAtAsc")
	if len(all) != n || all[0] != "1" || all[n-1] != fmt.Sprint(n) {
		t.Fatalf("all versions, oldest first: %v", all)
	}
	top := follow(armEnvs + fmt.Sprintf("/paged/versions?api-version=2024-04-01&$top=%d", arm.PageSize+2))
	if len(top) != arm.PageSize+2 || top[0] != fmt.Sprint(n) {
		t.Fatalf("$top=%d, newest first: %d versions %v", arm.PageSize+2, len(top), top)
	}
}

// jsonOf is v as a JSON document.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
