package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/api/runhistory"
	"github.com/shoal-ml/shoal/api/websession"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/internal/httpstatus"
	"github.com/shoal-ml/shoal/internal/workload"
	"github.com/shoal-ml/shoal/service"
)

// authenticate resolves the bearer credential to a principal, or answers
// 401 (and records the refusal). An API token names a user or the admin; a
// JWT is a workload identity token minted for a running job.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok, err := s.credential(r)
		if err != nil {
			// A refused request is anonymous: it takes an anonymous slot
			// (or is answered 429) like any request without a credential.
			s.asAnonymous(w, r, func() {
				// A refusal presenting a credential is always recorded;
				// bare anonymous requests, which anyone can send for free,
				// are recorded up to a bound per source and second.
				if ok || s.anonymousAudit.allow(r.RemoteAddr, time.Now()) {
					ri := requestInfo(r, "authenticate")
					_ = s.svc.RecordAudit(r.Context(), nil, ri, identity.AuditDenied, core.ErrorMessage(err))
				}
				s.writeError(w, r, err)
			})
			return
		}
		s.authenticated(w, r)
		next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), p)))
	})
}

// credential resolves the request's credential: the bearer token, or a
// studio session's cookie (which holds an API token) when there is no
// Authorization header. ok says whether a credential was presented.
func (s *Server) credential(r *http.Request) (p *identity.Principal, ok bool, err error) {
	token, ok := bearer(r)
	if !ok {
		if c := s.sessionCookie(r); c != "" {
			token, ok = c, true
		}
	}
	switch {
	case !ok:
		err = core.Errorf(core.EUNAUTHORIZED, "authentication required: send Authorization: Bearer <token> (see `shoal login` or <data-dir>/admin.token)")
	case workload.LooksLikeJWT(token) && strings.HasPrefix(r.URL.Path, "/subscriptions/"):
		p, err = s.svc.AuthenticateARMWorkload(r.Context(), token)
	case workload.LooksLikeJWT(token) && strings.HasPrefix(r.URL.Path, runhistory.PathPrefix):
		// run history stands for Azure's, which azure-ai-ml calls with
		// its Resource Manager credential
		p, err = s.svc.AuthenticateARMWorkload(r.Context(), token)
	case workload.LooksLikeJWT(token) && isScoringURI(r):
		// azure-ai-ml invokes a batch endpoint with an Azure ML token
		p, err = s.svc.AuthenticateScoringWorkload(r.Context(), token)
	case workload.LooksLikeJWT(token):
		p, err = s.svc.AuthenticateWorkload(r.Context(), token)
	default:
		p, err = s.svc.Authenticate(r.Context(), token)
	}
	return p, ok, err
}

// isScoringURI reports whether r is a POST to a batch endpoint's
// scoring URI (…/batch-endpoints/{name}/jobs), the one route that takes
// Azure ML's audience.
func isScoringURI(r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/workspaces/")
	parts := strings.Split(rest, "/")
	return ok && r.Method == http.MethodPost && len(parts) == 4 && parts[1] == "batch-endpoints" && parts[3] == "jobs"
}

// Principal returns the principal of a request's credential (bearer
// token or session cookie), for handlers mounted with Mount that
// authenticate on their own (the studio's pages redirect to sign-in).
func (s *Server) Principal(r *http.Request) (*identity.Principal, error) {
	if v, ok := r.Context().Value(resolvedKey{}).(resolved); ok {
		return v.p, v.err // Mount resolved it already
	}
	p, _, err := s.credential(r)
	return p, err
}

// Mount adds a handler outside the API's route table (the studio), with
// the same body limit and CSRF protection (except for a
// websession.PreSessionForm, which checks its own); it authenticates on
// its own (Principal). A request whose credential does not authenticate,
// and every request to a PreSessionForm, is anonymous (package admission).
func (s *Server) Mount(pattern string, h http.Handler) {
	if strings.HasPrefix(pattern, "GET /live/") {
		h = s.liveStream(h)
	}
	if f, ok := h.(websession.PreSessionForm); ok {
		s.mux.Handle(pattern, s.anonymousOnly(limitBody(f.Handler, MaxRequestBytes)))
		return
	}
	s.mux.Handle(pattern, s.identify(s.csrfProtect(limitBody(h, MaxRequestBytes))))
}

// liveStream counts a studio live page (server-sent events) among its
// viewer's streams; a request that does not authenticate goes on to the
// studio, which sends it to the sign-in page.
func (s *Server) liveStream(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Principal(r)
		if err != nil {
			h.ServeHTTP(w, r)
			return
		}
		s.adm.Stream(w, p, "live studio pages", func() { h.ServeHTTP(w, r) })
	})
}

// Allow is the one authorization decision (httpx.Allow, which the
// sub-packages call), for the API's routes and the
// studio's pages alike: may p do action (a route's declared action or one
// of the Action* pseudo-actions) in workspace ws ("" for a route without
// {ws}), on user (the path's {user}, for ActionSelfOrAdmin)? Nil when it
// may; EUNAUTHORIZED or EFORBIDDEN otherwise.
func Allow(ctx context.Context, svc *service.Services, p *identity.Principal, action, ws, user string) error {
	return httpx.Allow(ctx, svc, p, action, ws, user)
}

// authorize is the single authorization point: it checks the route's
// action for the caller before the handler runs, records refusals, logins
// and failed changes in the audit log, and hands successful changes to the
// store, which records them in the same transaction.
func (s *Server) authorize(route Route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		p := identity.PrincipalFrom(ctx)
		action := route.Action
		if route.Audit != "" {
			action = route.Audit
		}
		ri := requestInfo(r, action)
		err := Allow(ctx, s.svc, p, route.Action, r.PathValue("ws"), r.PathValue("user"))
		if err == nil && !p.ScopeAllows(route.Action, r.PathValue("ws"), r.PathValue("name")) {
			err = core.Errorf(core.EFORBIDDEN, "this token may only invoke batch endpoint %s", strings.TrimPrefix(p.Scope, "workspaces/"))
		}
		if err != nil {
			_ = s.svc.RecordAudit(ctx, p, ri, identity.AuditDenied, core.ErrorMessage(err))
			s.writeError(w, r, err)
			return
		}
		if route.Action == ActionLogin {
			_ = s.svc.RecordAudit(ctx, p, ri, identity.AuditSucceeded, "login")
		}
		if r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		rec := httpstatus.Wrap(w)
		next.ServeHTTP(rec, r.WithContext(identity.WithRequestInfo(ctx, ri)))
		if rec.Status >= 400 && !ri.Audited {
			why := http.StatusText(rec.Status)
			if rec.Status == StatusClientClosedRequest {
				why = "the client closed the request"
			}
			_ = s.svc.RecordAudit(ctx, p, ri, identity.AuditFailed, why)
		}
	})
}

// authenticateNode resolves a node credential; agent routes accept nothing
// else, and user routes never accept a node credential.
func (s *Server) authenticateNode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			s.asAnonymous(w, r, func() { s.writeError(w, r, core.Errorf(core.EUNAUTHORIZED, "a node credential is required")) })
			return
		}
		id, err := s.svc.AuthenticateNode(r.Context(), token)
		if err != nil {
			s.asAnonymous(w, r, func() { s.writeError(w, r, err) })
			return
		}
		s.authenticated(w, r)
		ctx := identity.WithPrincipal(r.Context(), &identity.Principal{ID: "node:" + id, Name: "node " + id, Kind: identity.PrincipalNode})
		next.ServeHTTP(w, r.WithContext(httpx.WithNode(ctx, id)))
	})
}
