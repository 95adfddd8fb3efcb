package api

import (
	"net/http"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/identity"
)

// spRoutes manage service principals (administrators only: the actions
// are server actions no role grants).
func (s *Server) spRoutes() []Route {
	return []Route{
		{Pattern: "GET /api/v1/serviceprincipals", Action: identity.ActUsersRead, Audit: "servicePrincipals/read", handler: s.handleListSPs},
		{Pattern: "POST /api/v1/serviceprincipals", Action: identity.ActUsersWrite, Audit: "servicePrincipals/write", handler: s.handleCreateSP},
		{Pattern: "GET /api/v1/serviceprincipals/{sp}", Action: identity.ActUsersRead, Audit: "servicePrincipals/read", handler: s.handleGetSP},
		{Pattern: "POST /api/v1/serviceprincipals/{sp}/secret", Action: identity.ActUsersWrite, Audit: "servicePrincipals/write", handler: s.handleResetSPSecret},
		{Pattern: "DELETE /api/v1/serviceprincipals/{sp}", Action: identity.ActUsersWrite, Audit: "servicePrincipals/delete", handler: s.handleDeleteSP},
	}
}

func (s *Server) spCredentials(r *http.Request, sp *identity.ServicePrincipal, secret string) client.SPCredentials {
	return client.SPCredentials{ServicePrincipal: sp, ClientSecret: secret, TenantID: "adfs", AuthorityHost: s.oauth.Authority()}
}

func (s *Server) handleListSPs(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListServicePrincipals(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*identity.ServicePrincipal]{Value: orEmpty(list)})
}

func (s *Server) handleCreateSP(w http.ResponseWriter, r *http.Request) {
	var req client.SPCreateRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	sp, secret, err := s.svc.CreateServicePrincipal(r.Context(), req.Name, req.Description)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, s.spCredentials(r, sp, secret))
}

func (s *Server) handleGetSP(w http.ResponseWriter, r *http.Request) {
	sp, err := s.svc.FindServicePrincipal(r.Context(), r.PathValue("sp"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sp)
}

func (s *Server) handleResetSPSecret(w http.ResponseWriter, r *http.Request) {
	sp, secret, err := s.svc.ResetServicePrincipalSecret(r.Context(), r.PathValue("sp"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, s.spCredentials(r, sp, secret))
}

func (s *Server) handleDeleteSP(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.DeleteServicePrincipal(r.Context(), r.PathValue("sp")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
