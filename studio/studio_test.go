package studio_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api"
	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/studio"
)

// newServer is the API with the studio mounted, as the server runs them.
func newServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	ts, token, _ := newServerWithServices(t)
	return ts, token
}

// newServerWithServices is newServer with the services behind it, for
// tests that set things up without the API.
func newServerWithServices(t *testing.T) (*httptest.Server, string, *service.Services) {
	t.Helper()
	return newServerScheme(t, false)
}

// newServerScheme is newServerWithServices as served over HTTPS when
// secure (the test server itself speaks plain HTTP: cookies are what
// changes).
func newServerScheme(t *testing.T, secure bool) (*httptest.Server, string, *service.Services) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	files, err := filestore.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := (&config.Config{}).Catalog(nil)
	svc := service.New(service.Config{Store: store, Files: files, Catalog: cat, ServerURL: "http://shoal.test", Providers: map[string]node.Provider{"local": fake.New()}})
	token, err := svc.BootstrapAdmin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(svc, nil)
	srv.SetSecure(secure)
	st, err := studio.New(studio.Config{Svc: svc, Principal: srv.Principal, Tracking: srv.Tracking(), Secure: secure})
	if err != nil {
		t.Fatal(err)
	}
	for p, h := range st.Routes() { // a conflicting pattern panics here
		srv.Mount(p, h)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, token, svc
}

func get(t *testing.T, ts *httptest.Server, path, session string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	if session != "" {
		req.AddCookie(&http.Cookie{Name: websession.SessionCookie, Value: session})
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// Pages need a session: without one, to the sign-in page (coming back
// after); with one, they render; a bad next never leaves the site.
func TestPagesNeedASession(t *testing.T) {
	ts, admin := newServer(t)
	for _, p := range []string{"/computes", "/jobs", "/quota", "/audit", "/users", "/computes/new"} {
		if resp := get(t, ts, p, ""); resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/signin?next=") {
			t.Errorf("GET %s without a session: %d %s", p, resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp := get(t, ts, p, admin); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s as admin: %d", p, resp.StatusCode)
		}
	}
	if resp := get(t, ts, "/computes/nothing-here", admin); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a missing compute: %d", resp.StatusCode)
	}
	if resp := get(t, ts, "/computes", "shoal_not-a-token"); resp.StatusCode != http.StatusFound {
		t.Errorf("a bad session: %d", resp.StatusCode)
	}
	// Sign-in: a token, then back to next — only on this site.
	pre, field := signInPage(t, ts)
	for next, want := range map[string]string{"/jobs": "/jobs", "//evil.example/x": "/", "https://evil.example/": "/", "/\\evil.example": "/", "/\t/evil.example": "/"} {
		resp := postSignIn(t, ts, pre, url.Values{"token": {admin}, "next": {next}, websession.CSRFField: {field}})
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
			t.Errorf("sign-in with next %q: %d %s, want %s", next, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// signInPage GETs the sign-in page and returns the pre-session cookie it
// sets and the CSRF field its form carries.
func signInPage(t *testing.T, ts *httptest.Server) (*http.Cookie, string) {
	t.Helper()
	resp, err := http.Get(ts.URL + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var pre *http.Cookie
	for _, c := range resp.Cookies() {
		if strings.HasSuffix(c.Name, websession.PreSessionCookie) {
			pre = c
		}
	}
	m := regexp.MustCompile(`name="_csrf" value="([^"]+)"`).FindSubmatch(b)
	if pre == nil || m == nil {
		t.Fatalf("the sign-in page sets no pre-session cookie (%v) or has no CSRF field", resp.Cookies())
	}
	return pre, string(m[1])
}

// postSignIn posts the sign-in form with the pre-session cookie (none
// when nil), not following the redirect.
func postSignIn(t *testing.T, ts *httptest.Server, pre *http.Cookie, form url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if pre != nil {
		req.AddCookie(&http.Cookie{Name: pre.Name, Value: pre.Value})
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
