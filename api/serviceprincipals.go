package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal"
)

// spRoutes manage service principals (administrators only: the actions
// are server actions no role grants).
func (s *Server) spRoutes() []Route {
	return []Route{
		{Pattern: "GET /api/v1/serviceprincipals", Action: shoal.ActUsersRead, Audit: "servicePrincipals/read", handler: s.handleListSPs},
		{Pattern: "POST /api/v1/serviceprincipals", Action: shoal.ActUsersWrite, Audit: "servicePrincipals/write", handler: s.handleCreateSP},
		{Pattern: "GET /api/v1/serviceprincipals/{sp}", Action: shoal.ActUsersRead, Audit: "servicePrincipals/read", handler: s.handleGetSP},
		{Pattern: "POST /api/v1/serviceprincipals/{sp}/secret", Action: shoal.ActUsersWrite, Audit: "servicePrincipals/write", handler: s.handleResetSPSecret},
		{Pattern: "DELETE /api/v1/serviceprincipals/{sp}", Action: shoal.ActUsersWrite, Audit: "servicePrincipals/delete", handler: s.handleDeleteSP},
	}
}

// SPCreateRequest names a new service principal.
type SPCreateRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SPCredentials is a service principal with its secret, answered once,
// when it is created or given a new secret: what AZURE_CLIENT_ID,
// AZURE_CLIENT_SECRET, AZURE_TENANT_ID and AZURE_AUTHORITY_HOST take.
type SPCredentials struct {
	*shoal.ServicePrincipal
	ClientSecret string `json:"client_secret"`
	// TenantID is "adfs": Azure's identity libraries skip Microsoft's
	// instance discovery for it (see oauthRoutes).
	TenantID      string `json:"tenant_id"`
	AuthorityHost string `json:"authority_host"`
}

func (s *Server) spCredentials(r *http.Request, sp *shoal.ServicePrincipal, secret string) SPCredentials {
	return SPCredentials{ServicePrincipal: sp, ClientSecret: secret, TenantID: "adfs", AuthorityHost: s.authorityBase()}
}

func (s *Server) handleListSPs(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListServicePrincipals(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.ServicePrincipal]{Value: orEmpty(list)})
}

func (s *Server) handleCreateSP(w http.ResponseWriter, r *http.Request) {
	var req SPCreateRequest
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

// CreateServicePrincipal creates a service principal; the answer holds its
// secret, which is never shown again.
func (c *Client) CreateServicePrincipal(ctx context.Context, name, description string) (*SPCredentials, error) {
	var out SPCredentials
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/serviceprincipals", SPCreateRequest{Name: name, Description: description}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListServicePrincipals lists service principals.
func (c *Client) ListServicePrincipals(ctx context.Context) ([]*shoal.ServicePrincipal, error) {
	var out listBody[*shoal.ServicePrincipal]
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/serviceprincipals", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// GetServicePrincipal returns a service principal.
func (c *Client) GetServicePrincipal(ctx context.Context, name string) (*shoal.ServicePrincipal, error) {
	var out shoal.ServicePrincipal
	if _, err := c.do(ctx, http.MethodGet, "/api/v1/serviceprincipals/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResetServicePrincipalSecret gives a service principal a new secret.
func (c *Client) ResetServicePrincipalSecret(ctx context.Context, name string) (*SPCredentials, error) {
	var out SPCredentials
	if _, err := c.do(ctx, http.MethodPost, "/api/v1/serviceprincipals/"+url.PathEscape(name)+"/secret", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteServicePrincipal deletes a service principal and its role assignments.
func (c *Client) DeleteServicePrincipal(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, "/api/v1/serviceprincipals/"+url.PathEscape(name), nil, nil, nil)
	return err
}
