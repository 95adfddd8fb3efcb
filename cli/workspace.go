package cli

import (
	"context"
	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/client"

	"github.com/shoal-ml/shoal"
)

func newWorkspaceCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "workspace", Short: "Manage workspaces"}
	var name, location, description string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a workspace",
		Args:  cobra.NoArgs,
		RunE: g.callAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.CreateWorkspace(ctx, &shoal.Workspace{Name: name, Location: location, Description: description, ResourceGroup: g.resourceGroup})
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
		RunE: g.callAndRender([]string{"name", "location", "created_on"}, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListWorkspaces(ctx)
		}),
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Show a workspace (default: the current one)",
		Args:  cobra.NoArgs,
		RunE: g.callAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.GetWorkspace(ctx, orDefault(name, ws))
		}),
	}
	show.Flags().StringVarP(&name, "name", "n", "", "workspace name")
	cmd.AddCommand(create, list, show)
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
