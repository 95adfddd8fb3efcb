package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// fuzzRoutes are the message-taking routes the fuzz target posts to: the
// agent protocol (with the node's credential), the ARM PUT and PATCH (with
// the admin's token) and the OAuth token endpoint (no credential).
var fuzzRoutes = []struct{ method, path, cred, ctype string }{
	{"POST", "/agent/v1/sync", "node", "application/json"},
	{"POST", "/agent/v1/attempts/ATT/ranks/0", "node", "application/json"},
	{"POST", "/agent/v1/attempts/ATT/ranks/0/token", "node", "application/json"},
	{"POST", "/agent/v1/attempts/ATT/ranks/0/gpu", "node", "application/json"},
	{"POST", "/agent/v1/join", "", "application/json"},
	{"PUT", "/subscriptions/s/resourceGroups/r/providers/Microsoft.MachineLearningServices/workspaces/default/computes/fuzz-c?api-version=2024-04-01", "admin", "application/json"},
	{"PATCH", "/subscriptions/s/resourceGroups/r/providers/Microsoft.MachineLearningServices/workspaces/default/computes/gpu?api-version=2024-04-01", "admin", "application/json"},
	{"POST", "/subscriptions/s/providers/Microsoft.MachineLearningServices/locations/local/updateQuotas?api-version=2024-04-01", "admin", "application/json"},
	{"POST", "/adfs/oauth2/token", "", "application/x-www-form-urlencoded"},
	{"PUT", "/api/v1/workspaces/default/computes/fuzz-n", "admin", "application/json"},
	{"POST", "/api/v1/workspaces/default/budgets", "admin", "application/json"},
}

// FuzzMessages sends arbitrary bodies to every agent-protocol route with
// a joined node's credential, and to the ARM, OAuth and native routes that
// take documents: no message may crash the server or get a 5xx — a bad one
// is a 4xx that says what is wrong.
func FuzzMessages(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"running":[{"attempt_id":"a","rank":0}]}`, `{"state":"Running"}`, `{"state":"Completed","exit_code":0}`,
		`{"resource":"https://management.azure.com/"}`, `{"node_id":"gpu-n1","address":"127.0.0.1","port":1}`,
		`{"properties":{"computeType":"AmlCompute","properties":{"scaleSettings":{"maxNodeCount":2}}}}`,
		`{"value":[{"id":"/x/workspaces/default/quotas/standardDSv2Family","limit":8}]}`,
		`grant_type=client_credentials&client_id=x&client_secret=y&scope=https%3A%2F%2Fmanagement.azure.com%2F.default`,
		`{"scope":"tag:team=a","limit":5,"period":"week","action":"block"}`,
		`null`, `[]`, `{"state":7}`, "\x00\xff", strings.Repeat("[", 1000),
	} {
		for r := range fuzzRoutes {
			f.Add(seed, uint8(r))
		}
	}
	e := newTestEnv(f)
	_, nodeCred := joinNode(f, e)
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		r := fuzzRoutes[int(which)%len(fuzzRoutes)]
		req, _ := http.NewRequest(r.method, e.ts.URL+r.path, strings.NewReader(body))
		req.Header.Set("Content-Type", r.ctype)
		switch r.cred {
		case "node":
			req.Header.Set("Authorization", "Bearer "+nodeCred)
		case "admin":
			req.Header.Set("Authorization", "Bearer "+e.admin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.path, err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s with %q: %d %s", r.method, r.path, body, resp.StatusCode, out)
		}
	})
}
