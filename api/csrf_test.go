package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/api/websession"
)

// A session's CSRF token is bound to its session: one minted for
// session A is refused with session B's cookie, and a cookie and header
// an attacker chose together (the double submit of earlier versions) is
// refused too.
func TestCSRFTokenIsBoundToTheSession(t *testing.T) {
	e := newTestEnv(t)
	alice := addUser(t, e, "alice", "Contributor")
	bob := addUser(t, e, "bob", "Contributor")
	const path = "/api/v1/workspaces/default/jobs"
	job := jobDoc("csrf-bound")

	refused := func(what string, r reply) {
		t.Helper()
		if r.status != http.StatusForbidden || !strings.Contains(string(r.body), websession.CSRFHeader) {
			t.Errorf("%s: %s, want 403 naming %s", what, r, websession.CSRFHeader)
		}
	}
	refused("alice's token with bob's session", send(t, e, "", "POST", path, job,
		map[string]string{websession.CSRFHeader: websession.CSRFToken(alice)}, websession.SessionCookie+"="+bob))
	refused("a double-submit pair (shoal_csrf cookie = header)", send(t, e, "", "POST", path, job,
		map[string]string{websession.CSRFHeader: "forged"}, websession.SessionCookie+"="+bob, "shoal_csrf=forged"))
	refused("the session's secret itself as the token", send(t, e, "", "POST", path, job,
		map[string]string{websession.CSRFHeader: bob}, websession.SessionCookie+"="+bob))
	refused("the sign-in token of the same secret", send(t, e, "", "POST", path, job,
		map[string]string{websession.CSRFHeader: websession.SignInToken(bob)}, websession.SessionCookie+"="+bob))
	// A form post carries it as a field, with the same rule.
	refused("a form with alice's token and bob's session", send(t, e, "", "POST", "/api/v1/tokens/none/revoke", websession.CSRFField+"="+websession.CSRFToken(alice),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, websession.SessionCookie+"="+bob))

	// Bob's own token passes the check (the job then names a compute
	// that does not exist: 404 from the handler, past the check).
	if r := send(t, e, "", "POST", path, job, map[string]string{websession.CSRFHeader: websession.CSRFToken(bob)}, websession.SessionCookie+"="+bob); r.status != http.StatusNotFound {
		t.Errorf("bob's own token with bob's session: %s, want 404 (past the CSRF check)", r)
	}
	if websession.CSRFToken(alice) == websession.CSRFToken(bob) || websession.CSRFToken("") != "" {
		t.Error("CSRF tokens of different sessions are equal, or an empty session has one")
	}
}

// Under HTTPS the session cookie is read only under its __Host- name (a
// plain-HTTP page or a sibling host cannot plant it); over plain HTTP
// under today's name.
func TestSessionCookieNameFollowsTheScheme(t *testing.T) {
	e := newTestEnv(t)
	get := func(cookie string) int {
		return send(t, e, "", "GET", "/api/v1/whoami", "", nil, cookie).status
	}
	if got := get(websession.SessionCookie + "=" + e.admin); got != http.StatusOK {
		t.Errorf("plain HTTP, %s: %d, want 200", websession.SessionCookie, got)
	}
	if got := get("__Host-" + websession.SessionCookie + "=" + e.admin); got != http.StatusUnauthorized {
		t.Errorf("plain HTTP, __Host-%s: %d, want 401", websession.SessionCookie, got)
	}
	e.srv.SetSecure(true)
	if got := get("__Host-" + websession.SessionCookie + "=" + e.admin); got != http.StatusOK {
		t.Errorf("HTTPS, __Host-%s: %d, want 200", websession.SessionCookie, got)
	}
	if got := get(websession.SessionCookie + "=" + e.admin); got != http.StatusUnauthorized {
		t.Errorf("HTTPS, %s (no prefix): %d, want 401", websession.SessionCookie, got)
	}
	// The CSRF check follows the same cookie.
	r := send(t, e, "", "POST", "/api/v1/workspaces/default/jobs", jobDoc("csrf-https"), nil, "__Host-"+websession.SessionCookie+"="+e.admin)
	if r.status != http.StatusForbidden {
		t.Errorf("HTTPS session without the CSRF header: %s, want 403", r)
	}
	if got, want := websession.CookieName(websession.PreSessionCookie, true), "__Host-shoal_presession"; got != want {
		t.Errorf("CookieName(presession, https) = %q, want %q", got, want)
	}
}
