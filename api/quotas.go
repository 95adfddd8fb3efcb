package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/service"
)

// quotaRoutes read and set a workspace's own vCPU limits per VM family
// (the native form of Azure's quotas and updateQuotas).
func (s *Server) quotaRoutes() []Route {
	return []Route{
		{Pattern: "GET /api/v1/workspaces/{ws}/quotas", Action: shoal.ActQuotasRead, handler: s.handleListQuotas},
		{Pattern: "PUT /api/v1/workspaces/{ws}/quotas/{family}", Action: shoal.ActQuotasWrite, handler: s.handleSetQuota},
	}
}

// quotaLocation is the ?location= of a quota request, or the catalog's
// default location.
func (s *Server) quotaLocation(r *http.Request) string {
	if l := r.URL.Query().Get("location"); l != "" {
		return l
	}
	return s.svc.Catalog().DefaultLocation()
}

func (s *Server) handleListQuotas(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListWorkspaceQuotas(r.Context(), s.quotaLocation(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := []service.WorkspaceQuota{}
	for _, q := range list {
		if strings.EqualFold(q.Workspace, r.PathValue("ws")) {
			out = append(out, q)
		}
	}
	writeJSON(w, http.StatusOK, listBody[service.WorkspaceQuota]{Value: out})
}

// QuotaSetRequest is the body of PUT …/quotas/{family}.
type QuotaSetRequest struct {
	Limit *int `json:"limit"`
}

func (s *Server) handleSetQuota(w http.ResponseWriter, r *http.Request) {
	var req QuotaSetRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Limit == nil {
		s.writeError(w, r, shoal.FieldErrorf("limit", "is required: the workspace's vCPU limit for the family"))
		return
	}
	res, err := s.svc.UpdateWorkspaceQuotas(r.Context(), s.quotaLocation(r),
		[]service.QuotaUpdate{{Workspace: r.PathValue("ws"), Family: r.PathValue("family"), Limit: *req.Limit}})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if res[0].Status != service.QuotaSuccess {
		field := "limit"
		if res[0].Status == service.QuotaInvalidFamily {
			field = "family"
		}
		s.writeError(w, r, shoal.FieldErrorf(field, "%s (%s)", res[0].Message, res[0].Status))
		return
	}
	writeJSON(w, http.StatusOK, res[0])
}

// ListQuotas lists a workspace's limit and use of each VM family at a
// location ("" for the default one).
func (c *Client) ListQuotas(ctx context.Context, workspace, location string) ([]service.WorkspaceQuota, error) {
	var out listBody[service.WorkspaceQuota]
	path := wsPath(workspace) + "/quotas"
	if location != "" {
		path += "?location=" + url.QueryEscape(location)
	}
	if _, err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// SetQuota sets a workspace's vCPU limit of a VM family at a location.
func (c *Client) SetQuota(ctx context.Context, workspace, location, family string, limit int) (*service.QuotaUpdateResult, error) {
	var out service.QuotaUpdateResult
	path := wsPath(workspace) + "/quotas/" + url.PathEscape(family)
	if location != "" {
		path += "?location=" + url.QueryEscape(location)
	}
	if _, err := c.do(ctx, http.MethodPut, path, QuotaSetRequest{Limit: &limit}, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
