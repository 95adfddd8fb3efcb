// Package accessapi serves the native API's access routes: the caller
// (whoami), users and their tokens, roles and role assignments, managed
// identities, the audit log, and the workload identity issuer's OpenID
// documents. api.Server routes them (authorized there, by the route
// table's actions); the decisions are the services'.
package accessapi

import (
	"net/http"
	"time"

	"github.com/shoal-ml/shoal/api/httpx"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/service"
)

// Handlers serve the access routes over the services.
type Handlers struct {
	svc  *service.Services
	errs httpx.Errors
}

// New returns the access handlers over svc, writing errors with errs.
func New(svc *service.Services, errs httpx.Errors) *Handlers {
	return &Handlers{svc: svc, errs: errs}
}

// Whoami answers the caller: its principal and roles by workspace.
func (s *Handlers) Whoami(w http.ResponseWriter, r *http.Request) {
	who, err := s.svc.FindWhoami(r.Context())
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, who)
}

// ListUsers lists the users.
func (s *Handlers) ListUsers(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListUsers(r.Context())
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.List[*identity.User]{Value: httpx.OrEmpty(list)})
}

// CreateUser creates a user.
func (s *Handlers) CreateUser(w http.ResponseWriter, r *http.Request) {
	var u identity.User
	if err := httpx.DecodeStrict(r.Body, &u); err != nil {
		s.errs.Write(w, r, err)
		return
	}
	out, err := s.svc.CreateUser(r.Context(), &u)
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusCreated, out)
}

// GetUser answers a user.
func (s *Handlers) GetUser(w http.ResponseWriter, r *http.Request) {
	u, err := s.svc.FindUser(r.Context(), r.PathValue("user"))
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, u)
}

// DisableUser disables a user: its tokens stop authenticating.
func (s *Handlers) DisableUser(w http.ResponseWriter, r *http.Request) { s.setDisabled(w, r, true) }

// EnableUser enables a disabled user again.
func (s *Handlers) EnableUser(w http.ResponseWriter, r *http.Request) { s.setDisabled(w, r, false) }

func (s *Handlers) setDisabled(w http.ResponseWriter, r *http.Request, disabled bool) {
	u, err := s.svc.SetUserDisabled(r.Context(), r.PathValue("user"), disabled)
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, u)
}

// CreateToken creates an API token for a user (?expires_in), shown once:
// the answer is not to be cached.
func (s *Handlers) CreateToken(w http.ResponseWriter, r *http.Request) {
	var req client.TokenCreateRequest
	if err := httpx.DecodeStrict(r.Body, &req); err != nil {
		s.errs.Write(w, r, err)
		return
	}
	var d time.Duration
	if req.ExpiresIn != "" {
		var err error
		if d, err = time.ParseDuration(req.ExpiresIn); err != nil || d <= 0 {
			s.errs.Write(w, r, core.FieldErrorf("expires_in", "%q is not a positive duration such as 720h", req.ExpiresIn))
			return
		}
	}
	tok, plain, err := s.svc.CreateToken(r.Context(), r.PathValue("user"), req.Name, d)
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpx.WriteJSON(w, http.StatusCreated, client.TokenCreateResponse{APIToken: tok, Token: plain})
}

// ListTokens lists a user's tokens (never their secrets).
func (s *Handlers) ListTokens(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListTokens(r.Context(), r.PathValue("user"))
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.List[*identity.APIToken]{Value: httpx.OrEmpty(list)})
}

// RevokeToken revokes a token.
func (s *Handlers) RevokeToken(w http.ResponseWriter, r *http.Request) {
	tok, err := s.svc.RevokeToken(r.Context(), r.PathValue("id"))
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, tok)
}

// ListRoles lists the built-in and custom roles.
func (s *Handlers) ListRoles(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListRoles(r.Context())
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.List[*identity.RoleDefinition]{Value: list})
}

// CreateRole defines a custom role.
func (s *Handlers) CreateRole(w http.ResponseWriter, r *http.Request) {
	var role identity.RoleDefinition
	if err := httpx.DecodeStrict(r.Body, &role); err != nil {
		s.errs.Write(w, r, err)
		return
	}
	out, err := s.svc.CreateRole(r.Context(), &role)
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusCreated, out)
}

// AssignRole grants a principal a role in the path's workspace.
func (s *Handlers) AssignRole(w http.ResponseWriter, r *http.Request) {
	var req client.AssignmentRequest
	if err := httpx.DecodeStrict(r.Body, &req); err != nil {
		s.errs.Write(w, r, err)
		return
	}
	a, err := s.svc.AssignRole(r.Context(), req.Principal, req.Role, r.PathValue("ws"))
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusCreated, a)
}

// UnassignRole removes a principal's role (?principal=, ?role=).
func (s *Handlers) UnassignRole(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := s.svc.UnassignRole(r.Context(), q.Get("principal"), q.Get("role"), r.PathValue("ws")); err != nil {
		s.errs.Write(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ListAssignments lists the path's workspace's role assignments.
func (s *Handlers) ListAssignments(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListRoleAssignments(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.List[*identity.RoleAssignment]{Value: httpx.OrEmpty(list)})
}

// ListIdentities lists the managed identities.
func (s *Handlers) ListIdentities(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListIdentities(r.Context())
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.List[*identity.Identity]{Value: httpx.OrEmpty(list)})
}

// CreateIdentity creates a user-assigned identity.
func (s *Handlers) CreateIdentity(w http.ResponseWriter, r *http.Request) {
	var req client.IdentityCreateRequest
	if err := httpx.DecodeStrict(r.Body, &req); err != nil {
		s.errs.Write(w, r, err)
		return
	}
	id, err := s.svc.CreateIdentity(r.Context(), req.Name)
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusCreated, id)
}

// ListAudit answers the audit log, filtered by ?since=, ?principal=
// and ?target=.
func (s *Handlers) ListAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := identity.AuditFilter{PrincipalID: q.Get("principal"), Target: q.Get("target")}
	if v := q.Get("since"); v != "" {
		t, err := httpx.ParseSince(v, time.Now())
		if err != nil {
			s.errs.Write(w, r, err)
			return
		}
		f.Since = t
	}
	list, err := s.svc.ListAudit(r.Context(), f)
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, httpx.List[*identity.AuditRecord]{Value: list})
}

// Discovery serves the workload identity issuer's OpenID metadata.
func (s *Handlers) Discovery(w http.ResponseWriter, r *http.Request) {
	if s.svc.Workload() == nil {
		s.errs.Write(w, r, core.Errorf(core.ENOTFOUND, "this server issues no workload tokens"))
		return
	}
	b, err := s.svc.Workload().Discovery()
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// JWKS serves the keys that verify workload identity tokens.
func (s *Handlers) JWKS(w http.ResponseWriter, r *http.Request) {
	if s.svc.Workload() == nil {
		s.errs.Write(w, r, core.Errorf(core.ENOTFOUND, "this server issues no workload tokens"))
		return
	}
	b, err := s.svc.Workload().JWKS(r.Context())
	if err != nil {
		s.errs.Write(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
