package api

import (
	"net/http"
	"strings"
)

// Instance applications (Jupyter, custom ones) run code their user wrote,
// and their pages run its JavaScript. Served on the studio's and API's
// origin, that script could read the studio's pages (and their CSRF
// token) and call the API as the viewer. The server therefore serves
// them on an origin of their own (a second listener, apps_listen): the
// browser's same-origin policy keeps an application's script from
// reading anything of the API's origin, while the session cookie, which
// is host-scoped and not port-scoped, still signs the user in there.

// SetAppsURL names the applications' own origin (scheme://host:port):
// the API's listener then answers application requests with a 307 to
// the same path there. "" serves them on the API's origin too (an
// embedding without a second listener).
func (s *Server) SetAppsURL(u string) {
	u = strings.TrimRight(u, "/")
	s.appsURL.Store(&u)
}

// AppsHandler serves the applications' origin: the application proxy's
// routes only, everything else 404.
func (s *Server) AppsHandler() http.Handler {
	return s.admit(s.appsMux)
}

// toAppsOrigin redirects an application request that reached the API's
// origin to the applications' origin (old links keep working; 307 keeps
// the method and body), or serves it when there is none.
func (s *Server) toAppsOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := s.appsURL.Load()
		if u == nil || *u == "" {
			h.ServeHTTP(w, r)
			return
		}
		http.Redirect(w, r, *u+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
}
