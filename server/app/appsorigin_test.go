package app

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api/websession"
)

// The server serves instances' applications on a second listener, an
// origin of their own (same scheme and certificate, another port):
// application links point there, the API's origin redirects
// application paths there, and it serves nothing else. Under HTTPS the
// studio's cookies carry the __Host- prefix; over HTTP today's names.
func TestServerAppsOriginAndCookiesPerScheme(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		dir := t.TempDir()
		m, err := Start(t.Context(), Options{Listen: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), ClientConfigPath: "-", TLS: useTLS})
		if err != nil {
			t.Fatal(err)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if useTLS {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(m.CA())
			client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		}
		get := func(u string) *http.Response {
			t.Helper()
			resp, err := client.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		api1, apps := mustURL(t, m.URL()), mustURL(t, m.AppsURL())
		if apps.Scheme != api1.Scheme || apps.Hostname() != api1.Hostname() || apps.Port() == api1.Port() || apps.Port() == "0" {
			t.Fatalf("tls=%v: apps origin %s beside the API's %s: want the same scheme and host on another port", useTLS, apps, api1)
		}
		const path = "/api/v1/workspaces/default/computes/nb/applications/jupyter/tree"
		if r := get(m.URL() + path); r.StatusCode != http.StatusTemporaryRedirect || r.Header.Get("Location") != m.AppsURL()+path {
			t.Errorf("tls=%v: an application path on the API's origin: %d %q, want 307 to the apps origin", useTLS, r.StatusCode, r.Header.Get("Location"))
		}
		if r := get(m.AppsURL() + path); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("tls=%v: an application path on the apps origin without a session: %d, want 401", useTLS, r.StatusCode)
		}
		for _, p := range []string{"/healthz", "/signin", "/computes", "/api/v1/whoami"} {
			if r := get(m.AppsURL() + p); r.StatusCode != http.StatusNotFound {
				t.Errorf("tls=%v: %s on the apps origin: %d, want 404", useTLS, p, r.StatusCode)
			}
		}
		// The sign-in page's pre-session cookie, named per scheme.
		r := get(m.URL() + "/signin")
		var pre *http.Cookie
		for _, c := range r.Cookies() {
			if strings.HasSuffix(c.Name, websession.PreSessionCookie) {
				pre = c
			}
		}
		want := websession.CookieName(websession.PreSessionCookie, useTLS)
		if pre == nil || pre.Name != want || pre.Secure != useTLS || pre.Path != "/" || pre.Domain != "" {
			t.Errorf("tls=%v: pre-session cookie %+v, want %s", useTLS, pre, want)
		}
		// A session under the scheme's name signs in; the other name does not.
		token, _ := os.ReadFile(filepath.Join(dir, "data", "admin.token"))
		for name, code := range map[string]int{websession.CookieName(websession.SessionCookie, useTLS): http.StatusOK, websession.CookieName(websession.SessionCookie, !useTLS): http.StatusUnauthorized} {
			req, _ := http.NewRequest("GET", m.URL()+"/api/v1/whoami", nil)
			req.AddCookie(&http.Cookie{Name: name, Value: strings.TrimSpace(string(token))})
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != code {
				t.Errorf("tls=%v: whoami with cookie %s: %d, want %d", useTLS, name, resp.StatusCode, code)
			}
		}
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
