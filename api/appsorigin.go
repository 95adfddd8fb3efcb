package api

import (
	"net/http"

	"github.com/shoal-ml/shoal/api/httpx"
)

// SetAppsURL names the applications' own origin (scheme://host:port):
// the API's listener then answers application requests with a 307 to
// the same path there (appproxy.Origin). "" serves them on the API's
// origin too (an embedding without a second listener).
func (s *Server) SetAppsURL(u string) { s.appsOrigin.Set(u) }

// AppsHandler serves the applications' origin: the application proxy's
// routes only, everything else 404.
func (s *Server) AppsHandler() http.Handler {
	return httpx.NoSniff(s.admit(s.appsMux))
}
