// Package workspace is `shoal workspace` and what limits a workspace's
// spending and use: `shoal quota`, `shoal budget` and `shoal cost`.
package workspace

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// NewCommand is `shoal workspace`: workspaces and their limits.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "workspace", Short: "Manage workspaces"}
	var name, location, description string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a workspace",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.CreateWorkspace(ctx, &core.Workspace{Name: name, Location: location, Description: description, ResourceGroup: g.ResourceGroup})
		}),
	}
	create.Flags().StringVarP(&name, "name", "n", "", "workspace name")
	create.Flags().StringVarP(&location, "location", "l", "", "default location of the workspace's computes")
	create.Flags().StringVar(&description, "description", "", "description")
	_ = create.MarkFlagRequired("name")
	list := &cobra.Command{
		Use:   "list",
		Short: "List workspaces",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender([]string{"name", "location", "created_on"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListWorkspaces(ctx)
		}),
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Show a workspace (default: the current one)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.GetWorkspace(ctx, orDefault(name, ws))
		}),
	}
	show.Flags().StringVarP(&name, "name", "n", "", "workspace name")
	cmd.AddCommand(create, list, show, newWorkspaceDeleteCommand(g))
	cmd.AddCommand(workspaceLimitsCommands(g)...)
	return cmd
}

// orDefault is name, or def when name is empty: a --name flag that
// defaults to the current workspace.
func orDefault(name, def string) string {
	if name != "" {
		return name
	}
	return def
}

func newWorkspaceDeleteCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete",
		Short: "Delete a workspace that has no computes and no unfinished jobs (asks for confirmation unless --yes)",
		Long: `Delete a workspace with its role assignments, quotas, limits and budgets. It is
refused, naming what remains, while the workspace has computes or unfinished jobs.
Finished jobs' records stay for cost and audit reports. The workspace "default"
cannot be deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := g.Client()
			if err != nil {
				return err
			}
			if !yes {
				ok, err := cmdutil.Confirm(g, fmt.Sprintf("Are you sure you want to delete workspace %q? (y/n): ", name))
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("delete cancelled")
				}
			}
			if err := c.DeleteWorkspace(cmd.Context(), name); err != nil {
				return err
			}
			fmt.Fprintf(g.Stderr, "Deleted workspace %q.\n", name)
			return nil
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "workspace name")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
