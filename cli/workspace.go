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
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.client()
			if err != nil {
				return err
			}
			if name != "" {
				ws = name
			}
			w, err := c.GetWorkspace(cmd.Context(), ws)
			if err != nil {
				return err
			}
			return g.render(w, nil)
		},
	}
	show.Flags().StringVarP(&name, "name", "n", "", "workspace name")
	cmd.AddCommand(create, list, show)
	cmd.AddCommand(workspaceLimitsCommands(g)...)
	return cmd
}
