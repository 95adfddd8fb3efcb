package studio_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api/websession"
)

// The sign-in form is protected from login CSRF: a post without the
// pre-session cookie, without the form's token, or with the token of
// another pre-session is refused with a clear 403 and starts no session.
func TestSignInNeedsTheFormsToken(t *testing.T) {
	ts, admin := newServer(t)
	pre, field := signInPage(t, ts)
	other, otherField := signInPage(t, ts)
	if pre.Value == other.Value || field == otherField {
		t.Fatal("two sign-in pages share a pre-session")
	}
	if !pre.HttpOnly || pre.Path != "/" || pre.Name != websession.PreSessionCookie {
		t.Errorf("pre-session cookie %+v: want %s, HttpOnly, Path=/", pre, websession.PreSessionCookie)
	}
	for what, c := range map[string]struct {
		pre  *http.Cookie
		form url.Values
	}{
		"no cookie, no token":           {nil, url.Values{"token": {admin}}},
		"the cookie, no token":          {pre, url.Values{"token": {admin}}},
		"a token, no cookie":            {nil, url.Values{"token": {admin}, websession.CSRFField: {field}}},
		"another pre-session's token":   {pre, url.Values{"token": {admin}, websession.CSRFField: {otherField}}},
		"the cookie's value as a token": {pre, url.Values{"token": {admin}, websession.CSRFField: {pre.Value}}},
	} {
		resp := postSignIn(t, ts, c.pre, c.form)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", what, resp.StatusCode)
		}
		for _, ck := range resp.Cookies() {
			if strings.HasSuffix(ck.Name, websession.SessionCookie) && ck.Value != "" {
				t.Errorf("%s: a session cookie was set", what)
			}
		}
	}
	// The refusal says why, on the sign-in page.
	req, _ := http.NewRequest("POST", ts.URL+"/signin", strings.NewReader(url.Values{"token": {admin}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "did not come from this site") {
		t.Errorf("sign-in without the form's token: %d %s", resp.StatusCode, b)
	}
	// With both, the session starts.
	resp = postSignIn(t, ts, pre, url.Values{"token": {admin}, websession.CSRFField: {field}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("sign-in with the form's token: %d, want 303", resp.StatusCode)
	}
}

// A page carries the session's CSRF token (meta tag and forms): the HMAC
// of its session, not a cookie's copy, and no CSRF cookie is set.
func TestPagesCarryTheSessionsCSRFToken(t *testing.T) {
	ts, admin := newServer(t)
	req, _ := http.NewRequest("GET", ts.URL+"/computes", nil)
	req.AddCookie(&http.Cookie{Name: websession.SessionCookie, Value: admin})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`).FindSubmatch(b)
	if m == nil || string(m[1]) != websession.CSRFToken(admin) {
		t.Fatalf("csrf-token meta %q, want the session's token", m)
	}
	if !strings.Contains(string(b), `name="_csrf" value="`+websession.CSRFToken(admin)+`"`) {
		t.Error("the sign-out form does not carry the session's token")
	}
	if len(resp.Cookies()) != 0 {
		t.Errorf("a page set cookies %v", resp.Cookies())
	}
}

// Under HTTPS the pre-session and session cookies carry the __Host-
// prefix (Secure, Path=/, no Domain) and only those names are read;
// over plain HTTP they keep their names.
func TestCookiesUseTheHostPrefixUnderHTTPS(t *testing.T) {
	for _, secure := range []bool{false, true} {
		ts, admin, _ := newServerScheme(t, secure)
		want := func(base string) string { return websession.CookieName(base, secure) }
		pre, field := signInPage(t, ts)
		if pre.Name != want(websession.PreSessionCookie) || pre.Secure != secure || pre.Path != "/" || pre.Domain != "" || !pre.HttpOnly {
			t.Errorf("secure=%v: pre-session cookie %+v, want %s", secure, pre, want(websession.PreSessionCookie))
		}
		resp := postSignIn(t, ts, pre, url.Values{"token": {admin}, websession.CSRFField: {field}})
		var session *http.Cookie
		for _, c := range resp.Cookies() {
			if strings.HasSuffix(c.Name, websession.SessionCookie) {
				session = c
			}
		}
		if resp.StatusCode != http.StatusSeeOther || session == nil {
			t.Fatalf("secure=%v: sign-in %d, cookies %v", secure, resp.StatusCode, resp.Cookies())
		}
		if session.Name != want(websession.SessionCookie) || session.Secure != secure || session.Path != "/" || session.Domain != "" || !session.HttpOnly {
			t.Errorf("secure=%v: session cookie %+v, want %s", secure, session, want(websession.SessionCookie))
		}
		// The page reads the session under that name only.
		for name, code := range map[string]int{want(websession.SessionCookie): http.StatusOK, websession.CookieName(websession.SessionCookie, !secure): http.StatusFound} {
			req, _ := http.NewRequest("GET", ts.URL+"/computes", nil)
			req.AddCookie(&http.Cookie{Name: name, Value: admin})
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != code {
				t.Errorf("secure=%v: /computes with cookie %s: %d, want %d", secure, name, resp.StatusCode, code)
			}
		}
	}
}
