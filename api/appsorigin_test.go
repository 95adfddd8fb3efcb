package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// With an applications' origin set, the API's origin no longer serves an
// instance's applications: it redirects (307, method kept) to the same
// path there; the applications' origin serves the proxy's routes and
// nothing else.
func TestApplicationsHaveTheirOwnOrigin(t *testing.T) {
	e := newTestEnv(t)
	const app = "/api/v1/workspaces/default/computes/nb/applications/jupyter/api/kernels?x=1"
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(base, method, path, token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader("{}"))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// No applications' origin (an embedding): served here as before.
	if r := do(e.ts.URL, "GET", app, e.admin); r.StatusCode == http.StatusTemporaryRedirect {
		t.Errorf("without an applications' origin: %d, want it served", r.StatusCode)
	}

	apps := httptest.NewServer(e.srv.AppsHandler())
	defer apps.Close()
	e.srv.SetAppsURL(apps.URL + "/")
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		r := do(e.ts.URL, m, app, e.admin)
		if r.StatusCode != http.StatusTemporaryRedirect || r.Header.Get("Location") != apps.URL+app {
			t.Errorf("%s on the API's origin: %d %q, want 307 to %s", m, r.StatusCode, r.Header.Get("Location"), apps.URL+app)
		}
	}
	// On the applications' origin the proxy answers (the instance does
	// not exist: 404 from the proxy, naming it; 401 without a token).
	if r := do(apps.URL, "GET", app, ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("app route on the applications' origin without a token: %d, want 401", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", apps.URL+app, nil)
	req.Header.Set("Authorization", "Bearer "+e.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("app route of a missing instance on the applications' origin: %d, want 404", resp.StatusCode)
	}
	// Nothing else is served there.
	for _, p := range []string{"/api/v1/whoami", "/api/v1/workspaces/default/computes", "/healthz", "/.well-known/jwks.json", "/api/v1/openapi.json", "/agent/v1/sync", "/"} {
		for _, m := range []string{"GET", "POST"} {
			if r := do(apps.URL, m, p, e.admin); r.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s on the applications' origin: %d, want 404", m, p, r.StatusCode)
			}
		}
	}
	// The API's own routes stay on the API's origin.
	if r := do(e.ts.URL, "GET", "/api/v1/whoami", e.admin); r.StatusCode != http.StatusOK {
		t.Errorf("whoami on the API's origin: %d", r.StatusCode)
	}
}
