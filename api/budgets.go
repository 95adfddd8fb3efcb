package api

import (
	"net/http"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
)

// budgetRoutes manage a workspace's budgets.
func (s *Server) budgetRoutes() []Route {
	return []Route{
		{Pattern: "GET /api/v1/workspaces/{ws}/budgets", Action: identity.ActQuotasRead, Audit: "budgets/read", handler: s.handleListBudgets},
		{Pattern: "POST /api/v1/workspaces/{ws}/budgets", Action: identity.ActQuotasWrite, Audit: "budgets/write", handler: s.handleCreateBudget},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/budgets", Action: identity.ActQuotasWrite, Audit: "budgets/delete", handler: s.handleDeleteBudget},
		{Pattern: "GET /api/v1/workspaces/{ws}/budgets/events", Action: identity.ActQuotasRead, Audit: "budgets/read", handler: s.handleBudgetEvents},
	}
}

func (s *Server) handleBudgetEvents(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListBudgetEvents(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*core.Event]{Value: orEmpty(list)})
}

func (s *Server) handleListBudgets(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListBudgets(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[money.BudgetStatus]{Value: orEmpty(list)})
}

func (s *Server) handleCreateBudget(w http.ResponseWriter, r *http.Request) {
	var b money.Budget
	if err := decodeStrict(r.Body, &b); err != nil {
		s.writeError(w, r, err)
		return
	}
	out, err := s.svc.CreateBudget(r.Context(), r.PathValue("ws"), &b)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleDeleteBudget(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.DeleteBudget(r.Context(), r.PathValue("ws"), r.URL.Query().Get("name")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
