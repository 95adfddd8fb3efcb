// Package websession holds what a browser session (the studio's) is
// known by: the cookies' names, the session's CSRF token and the sign-in
// forms' token, and the checks of a form's origin. Package api's
// middleware enforces them; the studio sets and shows them.
package websession

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
)

// Browser sessions (the studio) authenticate with a cookie, which a browser
// sends along with requests that other sites forge. Such requests must
// carry the session's CSRF token in a header (or a form field): an HMAC
// keyed by the session cookie's secret value, so that only a page that
// was given it (the studio's, in its csrf-token meta tag) knows it, a
// token of one session is worthless with another, and a cookie an
// attacker plants cannot be paired with a header of his choosing (as the
// double-submit cookie of earlier versions could). Requests with a bearer
// token are not sent by browsers on their own and need none.
const (
	// SessionCookie is the session cookie's name over plain HTTP; see
	// CookieName for HTTPS.
	SessionCookie = "shoal_session"
	// PreSessionCookie holds the random secret the sign-in forms' token
	// is derived from (login CSRF), set when the sign-in page is shown.
	PreSessionCookie = "shoal_presession"
	CSRFHeader       = "X-CSRF-Token"
	// CSRFField is the form field that carries the token in a form post.
	CSRFField = "_csrf"
	// HostPrefix is the prefix of cookie names under HTTPS: a browser
	// accepts such a cookie only when it is Secure, has Path=/ and no
	// Domain, so neither a sibling host nor a plain-HTTP page can plant
	// or overwrite it.
	HostPrefix = "__Host-"
)

// CookieName is the name of one of Shoal's cookies (SessionCookie,
// PreSessionCookie, ...): with the __Host- prefix when the server serves
// HTTPS (secure), as is over plain HTTP, where browsers refuse the prefix.
func CookieName(base string, secure bool) string {
	if secure {
		return HostPrefix + base
	}
	return base
}

// CSRFToken is the CSRF token of the session whose cookie holds session.
func CSRFToken(session string) string { return csrfMAC("shoal csrf v1", session) }

// SignInToken is the sign-in forms' token for the pre-session cookie's
// value presession.
func SignInToken(presession string) string { return csrfMAC("shoal sign-in csrf v1", presession) }

// ValidToken reports whether got is want, in constant time; an empty
// token is never valid.
func ValidToken(want, got string) bool {
	return want != "" && got != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

func csrfMAC(label, key string) string {
	if key == "" {
		return ""
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(label))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// PreSessionForm marks a handler given to Mount that serves a form posted
// before there is a session (the sign-in forms): it checks its own
// login-CSRF token (SignInToken), and the session's check does not apply.
type PreSessionForm struct{ http.Handler }

// SameOrigin reports whether the browser says the request comes from the
// server's own origin (Fetch Metadata, or an Origin header naming it).
func SameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	o := r.Header.Get("Origin")
	return o != "" && (o == "http://"+r.Host || o == "https://"+r.Host)
}
