// Package compute is `shoal compute` (clusters, instances, attached
// Kubernetes, their nodes and sizes) and `shoal location`.
package compute

import (
	"context"
	"encoding/json"
	"time"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// computeColumns are the table columns of computes.
var computeColumns = []string{"name", "type", "size", "location", "tier", "min_instances", "max_instances", "provisioning_state", "allocation_state", "current_node_count", "state"}

// NewCommand is `shoal compute`: clusters, instances and attached
// Kubernetes, as `az ml compute`.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{Use: "compute", Short: "Manage compute clusters and compute instances (az ml compute)"}
	cmd.AddCommand(
		newComputeCreateCommand(g), newComputeUpdateCommand(g), newComputeShowCommand(g),
		newComputeListCommand(g), newComputeDeleteCommand(g), newComputeListSizesCommand(g),
		newComputeListUsageCommand(g), newComputeEventsCommand(g), newComputeListNodesCommand(g),
		newComputePreemptNodeCommand(g), newComputeAddNodeCommand(g), newComputeRemoveNodeCommand(g),
		newComputeAttachCommand(g), newComputeInstanceTypeCommand(g),
	)
	cmd.AddCommand(instanceVerbs(g)...)
	return cmd
}

func newComputeShowCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show a compute",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			return showCompute(cmd.Context(), g, c, ws, name)
		},
	}
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newComputeListCommand(g *cmdutil.Globals) *cobra.Command {
	var typ string
	var serverless bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the computes of the workspace",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(computeColumns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.ListComputesWith(ctx, ws, typ, serverless)
		}),
	}
	cmd.Flags().StringVar(&typ, "type", "", "only computes of this type (amlcompute, computeinstance, kubernetes)")
	cmd.Flags().BoolVar(&serverless, "include-serverless", false, "also list the serverless pools Shoal created for jobs without a compute")
	return cmd
}

func newComputeListSizesCommand(g *cmdutil.Globals) *cobra.Command {
	return newLocationListCommand(g, "list-sizes", "List the VM sizes offered at a location, with their hourly prices",
		[]string{"name", "family", "v_cp_us", "memory_gb", "gpus", "gpu_model", "low_priority_capable"}, (*client.Client).ListSizes,
		func(raw json.RawMessage) (any, []string, error) {
			rows, err := sizeRows(raw)
			return rows, sizeTableColumns, err
		})
}

func newComputeListUsageCommand(g *cmdutil.Globals) *cobra.Command {
	return newLocationListCommand(g, "list-usage", "List vCPU quota usage at a location",
		[]string{"type", "current_value", "limit", "unit"}, (*client.Client).ListUsages,
		func(raw json.RawMessage) (any, []string, error) {
			rows, err := usageRows(raw)
			return rows, usageTableColumns, err
		})
}

// newLocationListCommand is a command that renders what list returns for
// a location, the workspace's unless --location names one; a table shows
// the rows that table makes of it, the other formats the API's objects in
// columns.
func newLocationListCommand(g *cmdutil.Globals, use, short string, columns []string, list func(*client.Client, context.Context, string) (json.RawMessage, error), table func(json.RawMessage) (rows any, columns []string, err error)) *cobra.Command {
	var location string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			loc := location
			if loc == "" {
				if loc, err = workspaceLocation(ctx, g, ws); err != nil {
					return err
				}
			}
			raw, err := list(c, ctx, loc)
			if err != nil {
				return err
			}
			if !g.TableView() {
				return g.Render(raw, columns)
			}
			rows, tableColumns, err := table(raw)
			if err != nil {
				return err
			}
			return g.Render(rows, tableColumns)
		},
	}
	cmd.Flags().StringVarP(&location, "location", "l", "", "location (default: the workspace's)")
	return cmd
}

// workspaceLocation returns the workspace's location, or the server's
// default location when the workspace does not exist yet.
func workspaceLocation(ctx context.Context, g *cmdutil.Globals, ws string) (string, error) {
	c, _, err := g.Client()
	if err != nil {
		return "", err
	}
	w, err := c.GetWorkspace(ctx, ws)
	if err == nil {
		return w.Location, nil
	}
	if core.ErrorCode(err) != core.ENOTFOUND {
		return "", err
	}
	w, err = c.GetWorkspace(ctx, core.DefaultWorkspace)
	if err != nil {
		return "", err
	}
	return w.Location, nil
}

func newComputeEventsCommand(g *cmdutil.Globals) *cobra.Command {
	var name string
	var follow bool
	columns := []string{"time", "kind", "actor", "reason"}
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show a compute's event log: created, updated, scaled, preempted, quota blocked, deleted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var last int64
			out := g.Stream(columns, nil) // one table header however many events
			for first := true; ; first = false {
				list, err := c.ListComputeEvents(ctx, ws, name)
				if err != nil {
					return err
				}
				fresh := []*core.Event{} // not nil: an empty log is [] in JSON, "(none)" in a table
				for _, e := range list {
					if e.ID > last {
						fresh = append(fresh, e)
						last = e.ID
					}
				}
				if first || len(fresh) > 0 {
					if err := out.Write(fresh); err != nil {
						return err
					}
				}
				if !follow {
					return nil
				}
				// New events as they come, until interrupted.
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Second):
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events as they happen (Ctrl-C ends)")
	cmd.Flags().StringVarP(&name, "name", "n", "", "compute name")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
