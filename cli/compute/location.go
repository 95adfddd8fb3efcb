package compute

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

// locationColumns are the table columns of locations.
var locationColumns = []string{"name", "provider", "aliases", "nodes", "hosts"}

// NewLocationCommand is `shoal location`: where computes can run, with
// their sizes and capacity; here because it reads the same catalog as
// `compute list-sizes`.
func NewLocationCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "location", Short: "Show the locations: their provider, hosts, capacity and quota use"}
	var name string
	show := &cobra.Command{
		Use:   "show",
		Short: "A location with its hosts (capacity, nodes, why one is unusable) and quota use",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(nil, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.GetLocation(ctx, name)
		}),
	}
	show.Flags().StringVarP(&name, "name", "n", "", "location name or alias")
	_ = show.MarkFlagRequired("name")
	list := &cobra.Command{
		Use:   "list",
		Short: "The server's locations",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(locationColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListLocations(ctx)
		}),
	}
	cmd.AddCommand(list, show)
	return cmd
}
