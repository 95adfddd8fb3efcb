package cli

import (
	"github.com/spf13/cobra"
)

func newComputeListNodesCommand(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "list-nodes",
		Short: "List a compute cluster's nodes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.client()
			if err != nil {
				return err
			}
			nodes, err := c.ListNodes(cmd.Context(), ws, name)
			if err != nil {
				return err
			}
			return g.render(nodes, []string{"node_id", "private_ip_address", "port", "node_state", "current_job_name"})
		},
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
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.client()
			if err != nil {
				return err
			}
			n, err := c.PreemptNode(cmd.Context(), ws, name, node)
			if err != nil {
				return err
			}
			return g.render(n, []string{"node_id", "node_state", "current_job_name"})
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	cmd.Flags().StringVar(&node, "node", "", "node id (see list-nodes)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}
