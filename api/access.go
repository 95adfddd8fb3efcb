package api

import (
	"net/http"
	"time"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/client"
)

func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request) {
	who, err := s.svc.FindWhoami(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, who)
}

func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListUsers(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.User]{Value: orEmpty(list)})
}

func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request) {
	var u shoal.User
	if err := decodeStrict(r.Body, &u); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.svc.CreateUser(r.Context(), &u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleGetUser(w http.ResponseWriter, r *http.Request) {
	u, err := s.svc.FindUser(r.Context(), r.PathValue("user"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, u)
}

func (s *Server) handleDisableUser(w http.ResponseWriter, r *http.Request) { s.setDisabled(w, r, true) }
func (s *Server) handleEnableUser(w http.ResponseWriter, r *http.Request)  { s.setDisabled(w, r, false) }

func (s *Server) setDisabled(w http.ResponseWriter, r *http.Request, disabled bool) {
	u, err := s.svc.SetUserDisabled(r.Context(), r.PathValue("user"), disabled)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, u)
}

func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request) {
	var req client.TokenCreateRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	var d time.Duration
	if req.ExpiresIn != "" {
		var err error
		if d, err = time.ParseDuration(req.ExpiresIn); err != nil || d <= 0 {
			s.writeError(w, r, shoal.FieldErrorf("expires_in", "%q is not a positive duration such as 720h", req.ExpiresIn))
			return
		}
	}
	tok, plain, err := s.svc.CreateToken(r.Context(), r.PathValue("user"), req.Name, d)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, client.TokenCreateResponse{APIToken: tok, Token: plain})
}

func (s *Server) handleListTokens(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListTokens(r.Context(), r.PathValue("user"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.APIToken]{Value: orEmpty(list)})
}

func (s *Server) handleRevokeToken(w http.ResponseWriter, r *http.Request) {
	tok, err := s.svc.RevokeToken(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tok)
}

func (s *Server) handleListRoles(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListRoles(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.RoleDefinition]{Value: list})
}

func (s *Server) handleCreateRole(w http.ResponseWriter, r *http.Request) {
	var role shoal.RoleDefinition
	if err := decodeStrict(r.Body, &role); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.svc.CreateRole(r.Context(), &role)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleAssignRole(w http.ResponseWriter, r *http.Request) {
	var req client.AssignmentRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	a, err := s.svc.AssignRole(r.Context(), req.Principal, req.Role, r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, a)
}

func (s *Server) handleUnassignRole(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := s.svc.UnassignRole(r.Context(), q.Get("principal"), q.Get("role"), r.PathValue("ws")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleListAssignments(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListRoleAssignments(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.RoleAssignment]{Value: orEmpty(list)})
}

func (s *Server) handleListIdentities(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListIdentities(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.Identity]{Value: orEmpty(list)})
}

func (s *Server) handleCreateIdentity(w http.ResponseWriter, r *http.Request) {
	var req client.IdentityCreateRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := s.svc.CreateIdentity(r.Context(), req.Name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, id)
}

func (s *Server) handleListAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := shoal.AuditFilter{PrincipalID: q.Get("principal"), Target: q.Get("target")}
	if v := q.Get("since"); v != "" {
		t, err := parseSince(v, time.Now())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f.Since = t
	}
	list, err := s.svc.ListAudit(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.AuditRecord]{Value: list})
}

// parseSince reads an RFC 3339 time or a duration back from now ("1h").
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, shoal.FieldErrorf("since", "%q is neither an RFC 3339 time nor a duration such as 1h", v)
}

func (s *Server) handleDiscovery(w http.ResponseWriter, r *http.Request) {
	if s.svc.Workload() == nil {
		s.writeError(w, r, shoal.Errorf(shoal.ENOTFOUND, "this server issues no workload tokens"))
		return
	}
	b, err := s.svc.Workload().Discovery()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (s *Server) handleJWKS(w http.ResponseWriter, r *http.Request) {
	if s.svc.Workload() == nil {
		s.writeError(w, r, shoal.Errorf(shoal.ENOTFOUND, "this server issues no workload tokens"))
		return
	}
	b, err := s.svc.Workload().JWKS(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func orEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}
