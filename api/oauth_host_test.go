package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestOpenIDMetadataIgnoresHostHeader: the metadata documents name this
// server's configured URL (http://shoal.test in the test env) whatever
// Host header a request carries, so a forged Host (a poisoned cache, a
// rebinding name) cannot send clients' secrets to another token
// endpoint. The authority a new service principal is told to use too.
func TestOpenIDMetadataIgnoresHostHeader(t *testing.T) {
	e := newTestEnv(t)
	get := func(method, path, token, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, e.ts.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "evil.example"
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
		if strings.Contains(string(data), "evil.example") {
			t.Errorf("%s %s with Host evil.example names it: %s", method, path, data)
		}
		return m
	}
	for path, field := range map[string]string{
		"/.well-known/openid-configuration":                "jwks_uri",
		"/adfs/.well-known/openid-configuration":           "token_endpoint",
		"/my-tenant/v2.0/.well-known/openid-configuration": "token_endpoint",
	} {
		m := get("GET", path, "", "")
		if v, _ := m[field].(string); !strings.HasPrefix(v, "http://shoal.test/") {
			t.Errorf("GET %s: %s %q, want it under http://shoal.test", path, field, v)
		}
		if v, _ := m["jwks_uri"].(string); !strings.HasPrefix(v, "http://shoal.test/") {
			t.Errorf("GET %s: jwks_uri %q, want it under http://shoal.test", path, v)
		}
	}
	sp := get("POST", "/api/v1/serviceprincipals", e.admin, `{"name":"ci-bot"}`)
	if sp["authority_host"] != "http://shoal.test" {
		t.Errorf("a new service principal's authority_host: %v, want http://shoal.test", sp["authority_host"])
	}
}

// The ARM facade's async-operation URLs, which Azure's SDKs poll with
// their bearer token, are on the server's configured URL, never a
// forged Host header's.
func TestARMOperationURLsIgnoreHostHeader(t *testing.T) {
	e := newTestEnv(t)
	path := "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default/computes/hostc?api-version=2024-04-01"
	req, err := http.NewRequest("PUT", e.ts.URL+path, strings.NewReader(`{"location":"local","properties":{"computeType":"AmlCompute","properties":{"vmSize":"Standard_DS3_v2","scaleSettings":{"maxNodeCount":1}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer "+e.admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	op := resp.Header.Get("Azure-AsyncOperation")
	if resp.StatusCode >= 300 || op == "" || strings.Contains(op, "evil.example") || !strings.HasPrefix(op, "http://shoal.test/") {
		t.Errorf("PUT with Host evil.example: %d, Azure-AsyncOperation %q", resp.StatusCode, op)
	}
}
