package api

import (
	"crypto/subtle"
	"net/http"

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
)

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
		c, err := r.Cookie(CSRFCookie)
		h := r.Header.Get(CSRFHeader)
		if err != nil || c.Value == "" || h == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(h)) != 1 {
			writeJSON(w, http.StatusForbidden, errorBody{Error: errorDetail{Code: shoal.EFORBIDDEN, Message: "a browser session's change needs the " + CSRFHeader + " header matching its CSRF cookie"}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
