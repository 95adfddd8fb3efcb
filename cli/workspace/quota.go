package workspace

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

// NewQuotaCommand is `shoal quota`: the workspace's own vCPU limits per
// VM family (Azure's workspace-level quotas), under the location's.
func NewQuotaCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "quota", Short: "The workspace's vCPU limits per VM family (under the location's)"}
	var location, family string
	var limit int
	list := &cobra.Command{Use: "list", Short: "Each VM family's limit for the workspace and what it uses", Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"family", "limit", "used", "workspace_limit", "location"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListQuotas(ctx, ws, location)
		})}
	set := &cobra.Command{Use: "set", Short: "Set the workspace's vCPU limit of a VM family (Owner)", Args: cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.SetQuota(ctx, ws, location, family, limit)
		})}
	set.Flags().StringVar(&family, "family", "", "VM family, e.g. standardDSv2Family (see `shoal quota list`)")
	set.Flags().IntVar(&limit, "limit", 0, "vCPUs; at most the location's limit, at least what the clusters' min_instances hold")
	_ = set.MarkFlagRequired("family")
	_ = set.MarkFlagRequired("limit")
	for _, c := range []*cobra.Command{list, set} {
		c.Flags().StringVar(&location, "location", "", "location (default: the server's default location)")
	}
	cmd.AddCommand(list, set)
	return cmd
}
