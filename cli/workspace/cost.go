package workspace

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

// NewCostCommand is `shoal cost`: what the workspace's nodes cost.
func NewCostCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "cost", Short: "What the workspace's nodes cost, from the catalog's prices"}
	var since, group string
	report := &cobra.Command{Use: "report", Short: "Node-seconds and cost grouped by compute, node, size, tier, tag:NAME, user or job", Args: cobra.NoArgs,
		RunE: g.CallAndRender(costTableColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			lines, err := c.CostReport(ctx, ws, since, group)
			if err != nil || !g.TableView() {
				return lines, err
			}
			// A table rounds to the cent and adds the total; the other
			// formats keep the report's exact numbers for scripts.
			return costRows(lines), nil
		})}
	report.Flags().StringVar(&since, "since", "30d", "from this long ago (30d, 12h) or an RFC 3339 time, to now")
	report.Flags().StringVar(&group, "group-by", "compute", "compute, node, size, tier, tag:NAME (a compute tag, e.g. tag:team), user or job (the idle rest is one line)")
	cmd.AddCommand(report)
	return cmd
}
