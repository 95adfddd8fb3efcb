package cost

import (
	"context"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/store"
)

// Budgets are stored per workspace (shoal.Tx.ListBudgets); their spend
// is priced from the usage ledger (report.go) on the controller's full
// passes, which record warnings at 50, 80 and 100 % as events (once per
// period each) and keep the blocked scopes that scale-up skips.

// CreateBudget adds (or replaces, by scope and period) a budget; Owners
// (quotas/write) only.
func (c *Costs) CreateBudget(ctx context.Context, ws string, b *money.Budget) (*money.Budget, error) {
	if err := c.cfg.Auth.Authorize(ctx, identity.PrincipalFrom(ctx), ws, identity.ActQuotasWrite); err != nil {
		return nil, err
	}
	if err := money.ValidateBudget(b); err != nil {
		return nil, err
	}
	err := c.cfg.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(ws); err != nil {
			return err
		}
		b.CreatedOn, b.CreatedBy = tx.Now(), identity.ActorName(ctx)
		identity.SetAuditDetail(ctx, "budget %s: %s, %s", b.Name(), b.Describe(), b.Action)
		return tx.PutBudget(ws, b)
	})
	if err != nil {
		return nil, err
	}
	c.cfg.Notify()
	return b, nil
}

// DeleteBudget removes a budget by name (scope/period).
func (c *Costs) DeleteBudget(ctx context.Context, ws, name string) error {
	if err := c.cfg.Auth.Authorize(ctx, identity.PrincipalFrom(ctx), ws, identity.ActQuotasWrite); err != nil {
		return err
	}
	err := c.cfg.Store.Update(ctx, func(tx store.Tx) error {
		err := tx.DeleteBudget(ws, name)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return core.Errorf(core.ENOTFOUND, "no budget %q in workspace %s (see `shoal budget list`)", name, ws)
		} else if err != nil {
			return err
		}
		identity.SetAuditDetail(ctx, "budget %s deleted", name)
		return nil
	})
	if err == nil {
		c.cfg.Notify()
	}
	return err
}

// ListBudgets returns a workspace's budgets with their spend now.
func (c *Costs) ListBudgets(ctx context.Context, ws string) ([]money.BudgetStatus, error) {
	if err := c.cfg.Auth.Authorize(ctx, identity.PrincipalFrom(ctx), ws, identity.ActQuotasRead); err != nil {
		return nil, err
	}
	var out []money.BudgetStatus
	err := c.cfg.Store.View(ctx, func(tx store.Tx) error {
		list, err := tx.ListBudgets(ws)
		if err != nil {
			return err
		}
		for _, b := range list {
			st, err := c.BudgetStatusAt(tx, ws, b, tx.Now())
			if err != nil {
				return err
			}
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

// BudgetStatusAt prices a budget's scope since its period began.
func (c *Costs) BudgetStatusAt(tx store.Tx, ws string, b *money.Budget, now time.Time) (money.BudgetStatus, error) {
	start := b.PeriodStart(now)
	st := money.BudgetStatus{Budget: b, Name: b.Name(), PeriodStart: start}
	usage, err := tx.ListNodeUsage(ws, start, now)
	if err != nil {
		return st, err
	}
	switch {
	case b.Scope == "workspace":
		for _, u := range usage {
			st.Spent += u.Overlap(start, now).Hours() * c.Price(u.Size, u.LowPriority)
		}
	case strings.HasPrefix(b.Scope, "tag:"):
		k, v, _ := strings.Cut(strings.TrimPrefix(b.Scope, "tag:"), "=")
		computes, err := tx.ListComputes(compute.ComputeFilter{Workspace: ws})
		if err != nil {
			return st, err
		}
		tagged := map[string]bool{}
		for _, comp := range computes {
			if comp.Tags[k] == v {
				tagged[strings.ToLower(comp.Name)] = true
			}
		}
		for _, u := range usage {
			if tagged[strings.ToLower(u.Compute)] {
				st.Spent += u.Overlap(start, now).Hours() * c.Price(u.Size, u.LowPriority)
			}
		}
	default: // user:NAME — the node time their jobs' ranks ran
		user := strings.TrimPrefix(b.Scope, "user:")
		runs, err := c.rankUsage(tx, ws, usage, start, now)
		if err != nil {
			return st, err
		}
		for _, r := range runs {
			if strings.EqualFold(r.job.CreatedBy, user) || strings.EqualFold(r.job.CreatedByPrincipal, "user:"+user) {
				st.Spent += r.d.Hours() * c.Price(r.node.Size, r.node.LowPriority)
			}
		}
	}
	st.Percent = 100 * st.Spent / b.Limit
	st.Reached = st.Spent >= b.Limit
	return st, nil
}

// ListBudgetEvents returns a workspace's budget warnings, oldest first.
func (c *Costs) ListBudgetEvents(ctx context.Context, ws string) (out []*core.Event, err error) {
	if err := c.cfg.Auth.Authorize(ctx, identity.PrincipalFrom(ctx), ws, identity.ActQuotasRead); err != nil {
		return nil, err
	}
	err = c.cfg.Store.View(ctx, func(tx store.Tx) error {
		out, err = tx.ListEvents(core.EventFilter{Workspace: ws, ResourceType: core.ResourceBudget})
		return err
	})
	return out, err
}
