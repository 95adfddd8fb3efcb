package compute

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

func newComputeListNodesCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "list-nodes",
		Short: "List a compute cluster's nodes",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender([]string{"node_id", "private_ip_address", "port", "ssh_port", "node_state", "current_job_name", "added_by"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListNodes(ctx, ws, name)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newComputePreemptNodeCommand(g *cmdutil.Globals) *cobra.Command {
	var name, node string
	cmd := &cobra.Command{
		Use:   "preempt-node",
		Short: "Preempt a node as a cloud evicts low-priority capacity (admin only; to rehearse preemption)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender([]string{"node_id", "node_state", "current_job_name"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.PreemptNode(ctx, ws, name, node)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	cmd.Flags().StringVar(&node, "node", "", "node id (see list-nodes)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}

func newComputeAddNodeCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "add-node",
		Short: "Add a machine of yours to a cluster: prints the one-time command that joins it",
		Long: `Add a node that you join by hand: run the printed command on the machine (it needs
the shoal binary and to reach the server). The node is never released by the
autoscaler; remove it with remove-node. The join command is shown once and stays
valid for 24 hours, for that node only. Adding a node needs the
computes/joinNode/action permission (Owner has it, Contributor does not), and a
cluster never has more nodes than its max_instances, joined or waiting to join.`,
		Args: cobra.NoArgs,
		RunE: g.CallAndRender([]string{"node_id", "compute", "expires_on", "command"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.AddNode(ctx, ws, name)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "cluster name")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newComputeRemoveNodeCommand(g *cmdutil.Globals) *cobra.Command {
	var name, node string
	cmd := &cobra.Command{
		Use:   "remove-node",
		Short: "Remove a node that was joined by hand (it finishes its job first)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender([]string{"node_id", "node_state", "current_job_name"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.RemoveNode(ctx, ws, name, node)
		}),
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "cluster name")
	cmd.Flags().StringVar(&node, "node", "", "node id (see list-nodes)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}
