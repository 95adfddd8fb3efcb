package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
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

// sameOrigin reports whether the browser says the request comes from the
// server's own origin (Fetch Metadata, or an Origin header naming it).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	o := r.Header.Get("Origin")
	return o != "" && (o == "http://"+r.Host || o == "https://"+r.Host)
}

// sessionCookie is the request's session cookie value, "" when none.
func (s *Server) sessionCookie(r *http.Request) string {
	if c, err := r.Cookie(CookieName(SessionCookie, s.secure.Load())); err == nil {
		return c.Value
	}
	return ""
}

// csrfProtect refuses state-changing requests that carry a session cookie
// without the session's CSRF token.
func (s *Server) csrfProtect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		session := s.sessionCookie(r)
		if session == "" {
			next.ServeHTTP(w, r)
			return
		}
		if strings.Contains(r.URL.Path, "/applications/") && sameOrigin(r) {
			// An instance's application (Jupyter, a custom one) posts to
			// itself through the proxy without Shoal's header; a request
			// the browser marks as coming from this very origin (the
			// applications' own, which serves nothing else) is not a
			// forgery (and the cookie is SameSite=Lax besides).
			next.ServeHTTP(w, r)
			return
		}
		h := r.Header.Get(CSRFHeader)
		if h == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			// A studio form posted without JavaScript carries the token
			// as a field.
			h = r.PostFormValue(CSRFField)
		}
		if !ValidToken(CSRFToken(session), h) {
			writeJSON(w, http.StatusForbidden, errorBody{Error: errorDetail{Code: core.EFORBIDDEN, Message: "a browser session's change needs the " + CSRFHeader + " header carrying this session's CSRF token (the studio page's csrf-token meta tag)"}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
