package workspace

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/money"
)

// NewBudgetCommand is `shoal budget`: spending caps in money per period.
func NewBudgetCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "budget", Short: "Spending caps per workspace, user or tag, per day, week or month"}
	var b money.Budget
	create := &cobra.Command{Use: "create", Short: "Create or replace a budget (Owner); warnings at 50/80/100 %, block stops scale-up at the limit", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.CreateBudget(ctx, ws, &b)
		})}
	create.Flags().StringVar(&b.Scope, "scope", "workspace", "workspace, user:NAME or tag:KEY=VALUE (the computes with that tag)")
	create.Flags().Float64Var(&b.Limit, "limit", 0, "amount per period, in USD (the catalog's prices)")
	create.Flags().StringVar(&b.Period, "period", "month", "day, week or month (UTC)")
	create.Flags().StringVar(&b.Action, "action", "warn", "warn: events only; block: also stop scale-up for the scope at the limit (running jobs finish)")
	_ = create.MarkFlagRequired("limit")
	list := &cobra.Command{Use: "list", Short: "Budgets with what their scope spent this period", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"name", "limit", "spent", "percent", "action", "reached", "period_start"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListBudgets(ctx, ws)
		})}
	var name string
	del := &cobra.Command{Use: "delete", Short: "Delete a budget", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			return c.DeleteBudget(cmd.Context(), ws, name)
		}}
	del.Flags().StringVarP(&name, "name", "n", "", "budget name, SCOPE/PERIOD as budget list shows (e.g. tag:team=vision/month)")
	_ = del.MarkFlagRequired("name")
	events := &cobra.Command{Use: "events", Short: "The budgets' warnings at 50, 80 and 100 % of their limit", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"time", "resource_name", "reason"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.BudgetEvents(ctx, ws)
		})}
	cmd.AddCommand(create, list, del, events)
	return cmd
}
