package api

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal"
)

// Browser sessions (the studio) authenticate with a cookie, which a browser
// sends along with requests that other sites forge. Such requests must
// echo the session's CSRF token in a header (double submit); requests
// with a bearer token are not sent by browsers on their own and need none.
const (
	SessionCookie = "shoal_session"
	CSRFCookie    = "shoal_csrf"
	CSRFHeader    = "X-CSRF-Token"
	// CSRFField is the form field that carries the token in a form post.
	CSRFField = "_csrf"
)

// sameOrigin reports whether the browser says the request comes from the
// server's own origin (Fetch Metadata, or an Origin header naming it).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	o := r.Header.Get("Origin")
	return o != "" && (o == "http://"+r.Host || o == "https://"+r.Host)
}

// csrfProtect refuses state-changing requests that carry a session cookie
// without the matching CSRF header.
func csrfProtect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if _, err := r.Cookie(SessionCookie); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		if strings.Contains(r.URL.Path, "/applications/") && sameOrigin(r) {
			// An instance's application (Jupyter, a custom one) posts to
			// itself through the proxy without Shoal's header; a request
			// the browser marks as coming from this very origin is not a
			// forgery (and the cookie is SameSite=Lax besides).
			next.ServeHTTP(w, r)
			return
		}
		c, err := r.Cookie(CSRFCookie)
		h := r.Header.Get(CSRFHeader)
		if h == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			// A studio form posted without JavaScript carries the token
			// as a field.
			h = r.PostFormValue(CSRFField)
		}
		if err != nil || c.Value == "" || h == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(h)) != 1 {
			writeJSON(w, http.StatusForbidden, errorBody{Error: errorDetail{Code: shoal.EFORBIDDEN, Message: "a browser session's change needs the " + CSRFHeader + " header matching its CSRF cookie"}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
