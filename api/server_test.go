package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/sealing"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlite/sqlitetest"
)

// testEnv is a test server over a real SQLite store, with a file store and
// the fake provider as the "local" location's provider.
type testEnv struct {
	ts    *httptest.Server
	srv   *api.Server
	svc   *service.Services
	admin string // the bootstrap admin's API token
	prov  *fake.Provider
	files *filestore.Store
	dir   string // holds the database and the file store ("files")
	store store.Store
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	return newTestEnvConfig(t, &config.Config{})
}

// newTestEnvConfig is newTestEnv with the server config cfg: every
// location's nodes come from the one fake provider.
func newTestEnvConfig(t testing.TB, cfg *config.Config) *testEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, sqlite.Config{Path: sqlitetest.Path(t, dir, "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	files, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	prov := fake.New()
	providers := map[string]node.Provider{"local": prov}
	for _, l := range cat.Locations() {
		providers[l.Name] = prov
	}
	secretsKey, err := sealing.LoadOrCreate(filepath.Join(dir, "keys", "workload.key"))
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: store, Catalog: cat, ServerURL: "http://shoal.test", Files: files,
		Providers: providers, SecretsKey: secretsKey})
	svc.SetWorkload(workload.New(workload.Config{Keys: svc.WorkloadKeys(), Clock: core.SystemClock{}, Issuer: "http://shoal.test"}))
	token, err := svc.BootstrapAdmin(ctx)
	if err != nil || token == "" {
		t.Fatalf("bootstrap: %q %v", token, err)
	}
	srv := api.NewServer(svc, nil)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &testEnv{ts: ts, srv: srv, svc: svc, admin: token, prov: prov, files: files, dir: dir, store: store}
}

// newTestServer returns an HTTP test server over a real SQLite store and
// the admin token.
func newTestServer(t *testing.T) (*httptest.Server, *api.Server, string) {
	t.Helper()
	e := newTestEnv(t)
	return e.ts, e.srv, e.admin
}

// TestEveryRouteNeedsACredential walks the route table: every route but the
// public ones answers 401 to an anonymous call and to a wrong token.
func TestEveryRouteNeedsACredential(t *testing.T) {
	ts, srv, _ := newTestServer(t)
	routes := srv.Routes()
	if len(routes) < 10 {
		t.Fatalf("route table has only %d routes", len(routes))
	}
	for _, r := range routes {
		method, path, _ := strings.Cut(r.Pattern, " ")
		path = strings.NewReplacer("{ws}", "default", "{name}", "abc", "{loc}", "local").Replace(path)
		for _, token := range []string{"", "shoal_not-a-real-token"} {
			req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("{}"))
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := http.StatusUnauthorized
			if r.Public {
				want = http.StatusOK
				if method == http.MethodPost {
					// The OAuth token endpoint: a body that is no grant
					// is the client's error, in OAuth's words.
					want = http.StatusBadRequest
				}
			}
			if resp.StatusCode != want {
				t.Errorf("%s %s with token %q: status %d, want %d", method, path, token, resp.StatusCode, want)
			}
		}
	}
}

func do(t *testing.T, ts *httptest.Server, token, method, path, body string, hdr map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp, out
}

func TestComputeHTTPContract(t *testing.T) {
	ts, _, token := newTestServer(t)
	const path = "/api/v1/workspaces/default/computes/cpu-cluster"
	doc := `{"name":"cpu-cluster","size":"Standard_DS3_v2","max_instances":2,"ssh_settings":{"admin_username":"azureuser","admin_password":"Sup3r-Secret-Pass"}}`

	resp, body := do(t, ts, token, "PUT", path, doc, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, body)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" || body["etag"] != etag {
		t.Fatalf("ETag header %q, body etag %v", etag, body["etag"])
	}
	if strings.Contains(mustJSON(body), "Sup3r-Secret-Pass") {
		t.Fatal("the admin password was returned")
	}

	t.Run("same document again is 200", func(t *testing.T) {
		resp, body := do(t, ts, token, "PUT", path, doc, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %v", resp.StatusCode, body)
		}
	})
	t.Run("stale If-Match is 412", func(t *testing.T) {
		resp, _ := do(t, ts, token, "PATCH", path, `{"max_instances":3}`, map[string]string{"If-Match": etag})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("first update with current etag: %d", resp.StatusCode)
		}
		resp, body := do(t, ts, token, "PATCH", path, `{"max_instances":4}`, map[string]string{"If-Match": etag})
		if resp.StatusCode != http.StatusPreconditionFailed {
			t.Fatalf("stale etag: %d %v", resp.StatusCode, body)
		}
		_, cur := do(t, ts, token, "GET", path, "", nil)
		if cur["max_instances"] != float64(3) {
			t.Fatalf("max_instances = %v after the refused update, want 3", cur["max_instances"])
		}
	})
	t.Run("immutable change is 409 naming the field", func(t *testing.T) {
		resp, body := do(t, ts, token, "PUT", path, strings.Replace(doc, "Standard_DS3_v2", "Standard_DS12_v2", 1), nil)
		if resp.StatusCode != http.StatusConflict {
			t.Fatalf("%d %v", resp.StatusCode, body)
		}
		e := body["error"].(map[string]any)
		if e["target"] != "size" || !strings.Contains(e["message"].(string), "size") {
			t.Fatalf("error %v", e)
		}
	})
	t.Run("unknown key is 400 naming it", func(t *testing.T) {
		resp, body := do(t, ts, token, "PUT", path, `{"name":"cpu-cluster","max_nodes":3}`, nil)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%d %v", resp.StatusCode, body)
		}
		if e := body["error"].(map[string]any); e["target"] != "max_nodes" {
			t.Fatalf("error %v", e)
		}
	})
	t.Run("oversized body is 413", func(t *testing.T) {
		big := `{"name":"cpu-cluster","description":"` + strings.Repeat("x", api.MaxRequestBytes) + `"}`
		resp, _ := do(t, ts, token, "PUT", path, big, nil)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("%d", resp.StatusCode)
		}
	})
	t.Run("client maps status codes back to error codes", func(t *testing.T) {
		c := client.NewClient(ts.URL, token)
		_, err := c.GetCompute(context.Background(), "default", "nope-cluster")
		if core.ErrorCode(err) != core.ENOTFOUND {
			t.Fatalf("got %v", err)
		}
		_, err = client.NewClient(ts.URL, "bad").GetCompute(context.Background(), "default", "cpu-cluster")
		if core.ErrorCode(err) != core.EUNAUTHORIZED {
			t.Fatalf("got %v", err)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
