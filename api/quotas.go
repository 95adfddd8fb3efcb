package api

import (
	"net/http"
	"strings"

	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
)

// quotaRoutes read and set a workspace's own vCPU limits per VM family
// (the native form of Azure's quotas and updateQuotas).
func (s *Server) quotaRoutes() []Route {
	return []Route{
		{Pattern: "GET /api/v1/workspaces/{ws}/quotas", Action: identity.ActQuotasRead, handler: s.handleListQuotas},
		{Pattern: "PUT /api/v1/workspaces/{ws}/quotas/{family}", Action: identity.ActQuotasWrite, handler: s.handleSetQuota},
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
	out := []money.WorkspaceQuota{}
	for _, q := range list {
		if strings.EqualFold(q.Workspace, r.PathValue("ws")) {
			out = append(out, q)
		}
	}
	writeJSON(w, http.StatusOK, listBody[money.WorkspaceQuota]{Value: out})
}

func (s *Server) handleSetQuota(w http.ResponseWriter, r *http.Request) {
	var req client.QuotaSetRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Limit == nil {
		s.writeError(w, r, core.FieldErrorf("limit", "is required: the workspace's vCPU limit for the family"))
		return
	}
	res, err := s.svc.UpdateWorkspaceQuotas(r.Context(), s.quotaLocation(r),
		[]money.QuotaUpdate{{Workspace: r.PathValue("ws"), Family: r.PathValue("family"), Limit: *req.Limit}})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if res[0].Status != money.QuotaSuccess {
		field := "limit"
		if res[0].Status == money.QuotaInvalidFamily {
			field = "family"
		}
		s.writeError(w, r, core.FieldErrorf(field, "%s (%s)", res[0].Message, res[0].Status))
		return
	}
	writeJSON(w, http.StatusOK, res[0])
}
