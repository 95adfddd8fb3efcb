package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEveryAnswerIsNoSniff: every face of the server answers with
// X-Content-Type-Options: nosniff — the native API's answers and errors,
// its unknown routes, ARM, MLflow, the probes, a page mounted beside the
// API as the studio is, and the application proxy's own errors on the
// applications' origin — so that no browser reads an answer that echoes
// a request as anything but what its Content-Type says.
func TestEveryAnswerIsNoSniff(t *testing.T) {
	e := newTestEnv(t)
	e.srv.Mount("GET /studio-probe", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html></html>")) }))
	apps := httptest.NewServer(e.srv.AppsHandler())
	defer apps.Close()
	e.srv.SetAppsURL(apps.URL + "/")
	const arm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"
	for _, c := range []struct{ base, token, method, path string }{
		{e.ts.URL, e.admin, "GET", "/api/v1/workspaces"},
		{e.ts.URL, "", "GET", "/api/v1/workspaces"},
		{e.ts.URL, e.admin, "GET", "/api/v1/workspaces/nope/computes/x"},
		{e.ts.URL, e.admin, "GET", "/no/such/route"},
		{e.ts.URL, "", "GET", "/healthz"},
		{e.ts.URL, "", "GET", "/studio-probe"},
		{e.ts.URL, e.admin, "GET", arm + "/computes?api-version=2024-04-01"},
		{e.ts.URL, e.admin, "GET", arm + "/computes/nope?api-version=2024-04-01"},
		{e.ts.URL, e.admin, "GET", mlflowBase + "runs/get?run_id=nope"},
		{e.ts.URL, e.admin, "GET", mlflowBase + "no-such-call"},
		{apps.URL, "", "GET", "/api/v1/workspaces/default/computes/ci/applications/jupyter/"},
		{apps.URL, e.admin, "GET", "/api/v1/workspaces/default/computes/ci/applications/jupyter/"},
		{apps.URL, e.admin, "GET", "/anything-else"},
	} {
		req, _ := http.NewRequest(c.method, c.base+c.path, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s%s (token %t): %d with X-Content-Type-Options %q, want nosniff", c.method, c.base, c.path, c.token != "", resp.StatusCode, got)
		}
	}
}

// TestErrorsDoNotEchoMarkup: an error that names the request's path —
// an unknown route, an unknown MLflow call — answers JSON in which no
// markup of the path survives as markup (a <script> and quotes arrive
// escaped), and the JSON still decodes to the path as sent.
func TestErrorsDoNotEchoMarkup(t *testing.T) {
	e := newTestEnv(t)
	const evil = `<script>alert("x")</script>'`
	for _, path := range []string{
		"/api/v1/%3Cscript%3Ealert(%22x%22)%3C/script%3E'",
		"/api/v1/workspaces/default/%3Cscript%3Ealert(%22x%22)%3C/script%3E'",
		mlflowBase + "%3Cscript%3Ealert(%22x%22)%3C/script%3E'",
	} {
		r := send(t, e, e.admin, "GET", path, "", nil)
		if r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, r.status)
		}
		if strings.Contains(string(r.body), "<") || strings.Contains(string(r.body), ">") {
			t.Errorf("GET %s: the answer carries markup: %s", path, r.body)
		}
		var v any
		if err := json.Unmarshal(r.body, &v); err != nil || !strings.Contains(mustJSONString(v), evil) {
			t.Errorf("GET %s: %s does not decode to a message naming the path (%v)", path, r.body, err)
		}
	}
}

// mustJSONString is the strings of a decoded JSON value, joined.
func mustJSONString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		var out []string
		for _, x := range v {
			out = append(out, mustJSONString(x))
		}
		return strings.Join(out, " ")
	}
	return ""
}

// TestBodyOverTheLimitIs413: a request body over the limit answers 413
// Request Entity Too Large with a message naming the limit in bytes, on
// the native API (its envelope), ARM (Azure's) and MLflow (MLflow's) —
// not 400, which says the request is malformed and worth fixing rather
// than shrinking.
func TestBodyOverTheLimitIs413(t *testing.T) {
	e := newTestEnv(t)
	big := `{"description":"` + strings.Repeat("x", 1<<20) + `"}`
	const arm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"
	for _, c := range []struct{ method, path, body, code string }{
		{"PUT", "/api/v1/workspaces/default/computes/cpu", big, `"code":"invalid"`},
		{"POST", "/api/v1/workspaces/default/jobs", big, `"code":"invalid"`},
		{"PUT", arm + "/computes/cpu?api-version=2024-04-01", `{"properties":` + big + `}`, `"code":"RequestEntityTooLarge"`},
		{"POST", mlflowBase + "runs/log-batch", `{"run_id":"j1","tags":[{"key":"k","value":"` + strings.Repeat("x", 1<<20) + `"}]}`, `"error_code":"INVALID_PARAMETER_VALUE"`},
	} {
		r := send(t, e, e.admin, c.method, c.path, c.body, map[string]string{"Content-Type": "application/json"})
		if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), "1048576 bytes") || !strings.Contains(string(r.body), c.code) {
			t.Errorf("%s %s with a body of %d bytes: %d %.300s; want 413 with %s naming the limit (1048576 bytes)", c.method, c.path, len(c.body), r.status, r.body, c.code)
		}
	}
}
