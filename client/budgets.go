package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/money"
)

// BudgetEvents lists the budgets' warnings (50, 80 and 100 %).
func (c *Client) BudgetEvents(ctx context.Context, workspace string) ([]*core.Event, error) {
	var out listBody[*core.Event]
	if _, err := c.do(ctx, http.MethodGet, wsPath(workspace)+"/budgets/events", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// CreateBudget creates or replaces a budget.
func (c *Client) CreateBudget(ctx context.Context, workspace string, b *money.Budget) (*money.Budget, error) {
	var out money.Budget
	if _, err := c.do(ctx, http.MethodPost, wsPath(workspace)+"/budgets", b, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListBudgets lists budgets with their spend.
func (c *Client) ListBudgets(ctx context.Context, workspace string) ([]money.BudgetStatus, error) {
	var out listBody[money.BudgetStatus]
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
