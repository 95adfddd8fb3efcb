package cli

import (
	"context"
	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/api"
)

func newComputeListNodesCommand(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "list-nodes",
		Short: "List a compute cluster's nodes",
		Args:  cobra.NoArgs,
		RunE: g.callAndRender([]string{"node_id", "private_ip_address", "port", "node_state", "current_job_name"}, func(ctx context.Context, c *api.Client, ws string) (any, error) {
			return c.ListNodes(ctx, ws, name)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newComputePreemptNodeCommand(g *globals) *cobra.Command {
	var name, node string
	cmd := &cobra.Command{
		Use:   "preempt-node",
		Short: "Preempt a node as a cloud evicts low-priority capacity (admin only; to rehearse preemption)",
		Args:  cobra.NoArgs,
		RunE: g.callAndRender([]string{"node_id", "node_state", "current_job_name"}, func(ctx context.Context, c *api.Client, ws string) (any, error) {
			return c.PreemptNode(ctx, ws, name, node)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	cmd.Flags().StringVar(&node, "node", "", "node id (see list-nodes)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}
