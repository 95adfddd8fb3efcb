package websession_test

import (
	"net/http/httptest"
	"testing"

	"github.com/shoal-ml/shoal/api/websession"
)

// A session's token is its own: another session's, the sign-in form's
// token of the same secret, and an empty token or secret are refused.
func TestTokensAreBoundToTheirSecretAndPurpose(t *testing.T) {
	a, b := websession.CSRFToken("secret-a"), websession.CSRFToken("secret-b")
	if !websession.ValidToken(a, websession.CSRFToken("secret-a")) {
		t.Fatal("a session's own token refused")
	}
	if websession.ValidToken(a, b) {
		t.Error("session b's token accepted for session a")
	}
	if websession.ValidToken(a, websession.SignInToken("secret-a")) {
		t.Error("the sign-in token of the same secret accepted as the session's CSRF token")
	}
	if websession.CSRFToken("") != "" || websession.ValidToken("", "") {
		t.Error("an empty secret gave a token, or an empty token was valid")
	}
}

// Under HTTPS the cookie's name takes the __Host- prefix; over plain
// HTTP browsers refuse it, so the name is as is.
func TestCookieNameFollowsTheScheme(t *testing.T) {
	if got := websession.CookieName(websession.SessionCookie, true); got != "__Host-shoal_session" {
		t.Errorf("secure: %q", got)
	}
	if got := websession.CookieName(websession.SessionCookie, false); got != "shoal_session" {
		t.Errorf("plain: %q", got)
	}
}

// SameOrigin trusts Fetch Metadata first, then an Origin naming the
// request's own host, and nothing else.
func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		site, origin string
		want         bool
	}{
		{"same-origin", "", true},
		{"same-site", "http://example.test", false},
		{"cross-site", "http://example.test", false},
		{"", "http://example.test", true},
		{"", "https://example.test", true},
		{"", "http://evil.test", false},
		{"", "", false},
	} {
		r := httptest.NewRequest("POST", "http://example.test/x", nil)
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if got := websession.SameOrigin(r); got != c.want {
			t.Errorf("Sec-Fetch-Site %q Origin %q: %v, want %v", c.site, c.origin, got, c.want)
		}
	}
}
