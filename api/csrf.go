package api

import (
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/core"
)

// sessionCookie is the request's session cookie value, "" when none.
func (s *Server) sessionCookie(r *http.Request) string {
	if c, err := r.Cookie(websession.CookieName(websession.SessionCookie, s.secure.Load())); err == nil {
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
		if strings.Contains(r.URL.Path, "/applications/") && websession.SameOrigin(r) {
			// An instance's application (Jupyter, a custom one) posts to
			// itself through the proxy without Shoal's header; a request
			// the browser marks as coming from this very origin (the
			// applications' own, which serves nothing else) is not a
			// forgery (and the cookie is SameSite=Lax besides).
			next.ServeHTTP(w, r)
			return
		}
		h := r.Header.Get(websession.CSRFHeader)
		if h == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			// A studio form posted without JavaScript carries the token
			// as a field.
			h = r.PostFormValue(websession.CSRFField)
		}
		if !websession.ValidToken(websession.CSRFToken(session), h) {
			writeJSON(w, http.StatusForbidden, errorBody{Error: errorDetail{Code: core.EFORBIDDEN, Message: "a browser session's change needs the " + websession.CSRFHeader + " header carrying this session's CSRF token (the studio page's csrf-token meta tag)"}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
