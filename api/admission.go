package api

import (
	"context"
	"net/http"

	"github.com/shoal-ml/shoal/api/admission"
	"github.com/shoal-ml/shoal/api/runhistory"
	"github.com/shoal-ml/shoal/domain/identity"
)

// The server's admission (package admission): read deadlines, the
// anonymous slots, and each principal's streams and transfers.

// Limits bound what one connection or caller can hold of the server
// (admission.Limits).
type Limits = admission.Limits

// DefaultLimits are the server's limits (admission.DefaultLimits).
func DefaultLimits() Limits { return admission.DefaultLimits() }

// NewHTTPServer returns an http.Server for h with l's timeouts and header
// bound (admission.NewHTTPServer).
func NewHTTPServer(h http.Handler, l Limits) *http.Server { return admission.NewHTTPServer(h, l) }

// SetLimits replaces the per-principal and anonymous caps (DefaultLimits
// until then); the timeouts are the http.Server's (NewHTTPServer).
func (s *Server) SetLimits(l Limits) { s.adm.SetLimits(l) }

// Uploads and downloads are each one of their caller's transfers
// (admission.Controller.Transfer).

// uploadRoutes read a large body (they bound it themselves).
var uploadRoutes = map[string]bool{
	"POST /api/v1/workspaces/{ws}/artifacts":                true,
	"PUT /agent/v1/attempts/{attempt}/ranks/{rank}/outputs": true,
}

// downloadRoutes write a large body.
var downloadRoutes = map[string]bool{
	"GET /api/v1/workspaces/{ws}/jobs/{name}/outputs":        true,
	"GET /api/v1/workspaces/{ws}/jobs/{name}/logs":           true, // follow=true is a stream instead
	"GET /api/v1/workspaces/{ws}/computes/{name}/logs":       true,
	"GET /agent/v1/attempts/{attempt}/ranks/{rank}/restore":  true,
	"GET /agent/v1/artifacts/{id}":                           true,
	"GET " + runhistory.Prefix + "/runs/{id}/logs/{file...}": true, // a log under run history's path
}

func (s *Server) admit(next http.Handler) http.Handler         { return s.adm.Admit(next) }
func (s *Server) anonymousOnly(next http.Handler) http.Handler { return s.adm.AnonymousOnly(next) }
func (s *Server) transfer(next http.Handler) http.Handler      { return s.adm.Transfer(next) }
func (s *Server) authenticated(w http.ResponseWriter, r *http.Request) {
	s.adm.Authenticated(w, r)
}
func (s *Server) asAnonymous(w http.ResponseWriter, r *http.Request, h func()) {
	s.adm.AsAnonymous(w, r, h)
}

// resolvedKey holds the outcome of a mounted handler's credential
// (identify), which Principal then returns.
type resolvedKey struct{}

type resolved struct {
	p   *identity.Principal
	err error
}

// identify resolves the credential of a request to a mounted handler
// (the studio, which authenticates on its own): a caller that
// authenticates is served as such; anyone else, signed out or with a
// made-up cookie, as anonymous.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _, err := s.credential(r)
		r = r.WithContext(context.WithValue(r.Context(), resolvedKey{}, resolved{p: p, err: err}))
		if err == nil {
			s.authenticated(w, r)
			next.ServeHTTP(w, r)
			return
		}
		s.asAnonymous(w, r, func() { next.ServeHTTP(w, r) })
	})
}
