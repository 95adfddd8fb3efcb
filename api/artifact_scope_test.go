package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// An artifact belongs to the workspace it was uploaded to: a job in
// another workspace that names its hash is refused exactly as for a hash
// never uploaded, so a hash cannot be used, nor its existence learned,
// across workspaces.
func TestArtifactsAreScopedToTheirWorkspace(t *testing.T) {
	e := newTestEnv(t)
	for _, ws := range []string{"wsa", "wsb"} {
		if resp, body := do(t, e.ts, e.admin, "POST", "/api/v1/workspaces", `{"name":"`+ws+`"}`, nil); resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %d %v", ws, resp.StatusCode, body)
		}
	}
	resp, body := do(t, e.ts, e.admin, "POST", "/api/v1/workspaces/wsa/artifacts", "the code of workspace A", nil)
	id, _ := body["id"].(string)
	if resp.StatusCode != http.StatusCreated || id == "" {
		t.Fatalf("upload: %d %v", resp.StatusCode, body)
	}
	submit := func(ws, code string) (int, string) {
		resp, body := do(t, e.ts, e.admin, "POST", "/api/v1/workspaces/"+ws+"/jobs", `{"name":"j1","command":"true","compute":"cpu1","code":"`+code+`"}`, nil)
		msg, _ := body["error"].(map[string]any)["message"].(string)
		return resp.StatusCode, msg
	}
	missing := "sha256:" + strings.Repeat("0", 64)
	stNone, msgNone := submit("wsb", missing)
	stOther, msgOther := submit("wsb", id)
	if stOther != stNone || strings.ReplaceAll(msgOther, id, missing) != msgNone || !strings.Contains(msgOther, "code") {
		t.Errorf("workspace B naming A's artifact: %d %q; a hash never uploaded: %d %q; want the same refusal", stOther, msgOther, stNone, msgNone)
	}
	if st, msg := submit("wsa", id); strings.Contains(msg, "artifact") {
		t.Errorf("workspace A naming its own artifact: %d %q", st, msg)
	}
	// Uploading the same content to B stores B's own copy, which B may use.
	if resp, body := do(t, e.ts, e.admin, "POST", "/api/v1/workspaces/wsb/artifacts", "the code of workspace A", nil); resp.StatusCode != http.StatusCreated || body["id"] != id {
		t.Fatalf("upload to B: %d %v", resp.StatusCode, body)
	}
	if st, msg := submit("wsb", id); strings.Contains(msg, "artifact") {
		t.Errorf("workspace B naming its own upload: %d %q", st, msg)
	}
}
