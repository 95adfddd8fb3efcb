package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/service"
)

// budgetRoutes manage a workspace's budgets.
func (s *Server) budgetRoutes() []Route {
	return []Route{
		{Pattern: "GET /api/v1/workspaces/{ws}/budgets", Action: shoal.ActQuotasRead, Audit: "budgets/read", handler: s.handleListBudgets},
		{Pattern: "POST /api/v1/workspaces/{ws}/budgets", Action: shoal.ActQuotasWrite, Audit: "budgets/write", handler: s.handleCreateBudget},
		{Pattern: "DELETE /api/v1/workspaces/{ws}/budgets", Action: shoal.ActQuotasWrite, Audit: "budgets/delete", handler: s.handleDeleteBudget},
		{Pattern: "GET /api/v1/workspaces/{ws}/budgets/events", Action: shoal.ActQuotasRead, Audit: "budgets/read", handler: s.handleBudgetEvents},
	}
}

func (s *Server) handleBudgetEvents(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListBudgetEvents(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[*shoal.Event]{Value: orEmpty(list)})
}

// BudgetEvents lists the budgets' warnings (50, 80 and 100 %).
func (c *Client) BudgetEvents(ctx context.Context, workspace string) ([]*shoal.Event, error) {
	var out listBody[*shoal.Event]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/budgets/events", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

func (s *Server) handleListBudgets(w http.ResponseWriter, r *http.Request) {
	list, err := s.svc.ListBudgets(r.Context(), r.PathValue("ws"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listBody[service.BudgetStatus]{Value: orEmpty(list)})
}

func (s *Server) handleCreateBudget(w http.ResponseWriter, r *http.Request) {
	var b shoal.Budget
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

// CreateBudget creates or replaces a budget.
func (c *Client) CreateBudget(ctx context.Context, workspace string, b *shoal.Budget) (*shoal.Budget, error) {
	var out shoal.Budget
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/budgets", b, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBudgets lists budgets with their spend.
func (c *Client) ListBudgets(ctx context.Context, workspace string) ([]service.BudgetStatus, error) {
	var out listBody[service.BudgetStatus]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/budgets", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// DeleteBudget deletes a budget by name (scope/period).
func (c *Client) DeleteBudget(ctx context.Context, workspace, name string) error {
	_, err := c.do(ctx, http.MethodDelete, wsPath(workspace)+"/budgets?name="+url.QueryEscape(name), nil, nil, nil)
	return err
}
