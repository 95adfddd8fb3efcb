package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// postToken posts a client-credentials grant and decodes the answer.
func postToken(t *testing.T, e *testEnv, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(e.ts.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func grant(id, secret, scope string) url.Values {
	return url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}, "scope": {scope}}
}

// TestServicePrincipalClientCredentials: a service principal made by an
// administrator gets tokens from both token endpoints with its client ID
// and secret; they carry its roles on Shoal's own routes (its audience)
// and on the Resource Manager routes (management.azure.com's); a reset
// secret or a deleted principal stops them.
func TestServicePrincipalClientCredentials(t *testing.T) {
	e := newTestEnv(t)
	resp, created := do(t, e.ts, e.admin, "POST", "/api/v1/serviceprincipals", `{"name":"ci-bot","description":"the pipeline"}`, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, created)
	}
	id, secret := created["client_id"].(string), created["client_secret"].(string)
	if id == "" || !strings.HasPrefix(secret, "shoalsp_") || created["tenant_id"] != "adfs" || created["authority_host"] != "http://shoal.test" {
		t.Fatalf("create answered %v", created)
	}
	if resp, got := do(t, e.ts, e.admin, "GET", "/api/v1/serviceprincipals/ci-bot", "", nil); resp.StatusCode != 200 || got["client_secret"] != nil || got["secret_hash"] != nil {
		t.Fatalf("show: %d %v (the secret is never shown again)", resp.StatusCode, got)
	}

	// The metadata MSAL reads names this server's token endpoints, at its
	// configured URL (http://shoal.test).
	for path, want := range map[string]string{
		"/adfs/.well-known/openid-configuration":           "http://shoal.test/adfs/oauth2/token",
		"/my-tenant/v2.0/.well-known/openid-configuration": "http://shoal.test/my-tenant/oauth2/v2.0/token",
	} {
		resp, body := do(t, e.ts, "", "GET", path, "", nil)
		if resp.StatusCode != 200 || body["token_endpoint"] != want || body["authorization_endpoint"] == nil {
			t.Errorf("GET %s: %d %v, want token_endpoint %s", path, resp.StatusCode, body, want)
		}
	}

	// Refusals in OAuth's words.
	for _, c := range []struct {
		form   url.Values
		status int
		code   string
	}{
		{grant(id, "shoalsp_wrong", "http://shoal.test/.default"), 401, "invalid_client"},
		{grant("no-such-client", secret, "http://shoal.test/.default"), 401, "invalid_client"},
		{grant(id, secret, "http://shoal.test"), 400, "invalid_scope"},
		{url.Values{"grant_type": {"password"}, "client_id": {id}}, 400, "unsupported_grant_type"},
	} {
		status, body := postToken(t, e, "/adfs/oauth2/token", c.form)
		if status != c.status || body["error"] != c.code || body["error_description"] == "" {
			t.Errorf("%v: %d %v, want %d %s", c.form, status, body, c.status, c.code)
		}
	}

	status, body := postToken(t, e, "/adfs/oauth2/token", grant(id, secret, "http://shoal.test/.default"))
	if status != 200 || body["token_type"] != "Bearer" || body["expires_in"].(float64) < 3000 {
		t.Fatalf("token: %d %v", status, body)
	}
	native := body["access_token"].(string)
	status, body = postToken(t, e, "/any-tenant/oauth2/v2.0/token", grant(id, secret, "https://management.azure.com/.default"))
	if status != 200 {
		t.Fatalf("ARM token: %d %v", status, body)
	}
	arm := body["access_token"].(string)
	const armComputes = "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/computes?api-version=2024-04-01"

	// No role yet: authenticated, refused.
	if resp, body := do(t, e.ts, native, "GET", "/api/v1/workspaces/default/computes", "", nil); resp.StatusCode != 403 {
		t.Fatalf("without a role: %d %v", resp.StatusCode, body)
	}
	if resp, body := do(t, e.ts, e.admin, "POST", "/api/v1/workspaces/default/roleassignments", `{"principal":"sp:ci-bot","role":"Reader"}`, nil); resp.StatusCode != 201 {
		t.Fatalf("assign: %d %v", resp.StatusCode, body)
	}
	if resp, body := do(t, e.ts, native, "GET", "/api/v1/workspaces/default/computes", "", nil); resp.StatusCode != 200 {
		t.Fatalf("Reader lists computes: %d %v", resp.StatusCode, body)
	}
	if resp, body := do(t, e.ts, arm, "GET", armComputes, "", nil); resp.StatusCode != 200 {
		t.Fatalf("Reader lists computes through ARM: %d %v", resp.StatusCode, body)
	}
	if resp, _ := do(t, e.ts, arm, "GET", "/api/v1/workspaces/default/computes", "", nil); resp.StatusCode != 401 {
		t.Errorf("a management.azure.com token on Shoal's own route: %d, want 401", resp.StatusCode)
	}
	if resp, _ := do(t, e.ts, native, "PUT", "/api/v1/workspaces/default/computes/c1", `{"size":"Standard_DS3_v2","max_instances":1}`, nil); resp.StatusCode != 403 {
		t.Errorf("a Reader creates a compute: %d, want 403", resp.StatusCode)
	}
	if resp, _ := do(t, e.ts, native, "GET", "/api/v1/users", "", nil); resp.StatusCode != 403 {
		t.Errorf("a service principal lists users: %d, want 403", resp.StatusCode)
	}

	// The audit log names the principal, for its token and its calls.
	resp, audit := do(t, e.ts, e.admin, "GET", "/api/v1/audit?principal=sp:ci-bot", "", nil)
	if n := len(audit["value"].([]any)); resp.StatusCode != 200 || n < 3 {
		t.Errorf("audit of sp:ci-bot: %d, %d records", resp.StatusCode, n)
	}

	// A new secret: the old one and the tokens minted with it stop.
	_, reset := do(t, e.ts, e.admin, "POST", "/api/v1/serviceprincipals/ci-bot/secret", "", nil)
	newSecret, _ := reset["client_secret"].(string)
	if newSecret == "" || newSecret == secret || reset["client_id"] != id {
		t.Fatalf("reset: %v", reset)
	}
	if status, _ := postToken(t, e, "/adfs/oauth2/token", grant(id, secret, "http://shoal.test/.default")); status != 401 {
		t.Errorf("the old secret after a reset: %d, want 401", status)
	}
	status, body = postToken(t, e, "/adfs/oauth2/token", grant(id, newSecret, "http://shoal.test/.default"))
	if status != 200 {
		t.Fatalf("the new secret: %d %v", status, body)
	}
	fresh := body["access_token"].(string)
	if resp, _ := do(t, e.ts, fresh, "GET", "/api/v1/workspaces/default/computes", "", nil); resp.StatusCode != 200 {
		t.Errorf("a token of the new secret: %d", resp.StatusCode)
	}

	// Deleted: its tokens and its role assignments go.
	if resp, _ := do(t, e.ts, e.admin, "DELETE", "/api/v1/serviceprincipals/ci-bot", "", nil); resp.StatusCode != 204 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if resp, _ := do(t, e.ts, fresh, "GET", "/api/v1/workspaces/default/computes", "", nil); resp.StatusCode != 401 {
		t.Errorf("a deleted service principal's token: %d, want 401", resp.StatusCode)
	}
	_, ras := do(t, e.ts, e.admin, "GET", "/api/v1/workspaces/default/roleassignments", "", nil)
	for _, a := range ras["value"].([]any) {
		if a.(map[string]any)["principal_id"] == "sp:ci-bot" {
			t.Errorf("a deleted service principal keeps its assignment %v", a)
		}
	}
}

// TestServicePrincipalsNeedAnAdministrator: a user with every role in a
// workspace still cannot make or see service principals.
func TestServicePrincipalsNeedAnAdministrator(t *testing.T) {
	e := newTestEnv(t)
	do(t, e.ts, e.admin, "POST", "/api/v1/users", `{"name":"alice"}`, nil)
	do(t, e.ts, e.admin, "POST", "/api/v1/workspaces/default/roleassignments", `{"principal":"user:alice","role":"Owner"}`, nil)
	_, tok := do(t, e.ts, e.admin, "POST", "/api/v1/users/alice/tokens", `{"name":"t"}`, nil)
	alice, _ := tok["token"].(string)
	if alice == "" {
		t.Fatalf("token for alice: %v", tok)
	}
	for _, c := range [][2]string{{"POST", "/api/v1/serviceprincipals"}, {"GET", "/api/v1/serviceprincipals"}} {
		if resp, body := do(t, e.ts, alice, c[0], c[1], `{"name":"x"}`, nil); resp.StatusCode != 403 {
			t.Errorf("%s %s as a workspace Owner: %d %v, want 403", c[0], c[1], resp.StatusCode, body)
		}
	}
	if resp, body := do(t, e.ts, e.admin, "POST", "/api/v1/serviceprincipals", `{"name":"-bad"}`, nil); resp.StatusCode != 400 || !strings.Contains(body["error"].(map[string]any)["message"].(string), "name") {
		t.Errorf("a bad name: %d %v", resp.StatusCode, body)
	}
}
