package api

import (
	"net/http"
	"time"

	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/service/cost"
)

// costRoutes serve the cost report.
func (s *Server) costRoutes() []Route {
	return []Route{
		{Pattern: "GET /api/v1/workspaces/{ws}/cost", Action: identity.ActComputesRead, handler: s.handleCostReport},
	}
}

func (s *Server) handleCostReport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	now := s.svc.Now()
	since := now.Add(-30 * 24 * time.Hour)
	if v := q.Get("since"); v != "" {
		t, err := cost.ParseSince(v, now)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		since = t
	}
	group := q.Get("group_by")
	if group == "" {
		group = "compute"
	}
	lines, err := s.svc.CostReport(r.Context(), r.PathValue("ws"), since, now, group)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[money.CostLine]{Value: orEmpty(lines)})
}
