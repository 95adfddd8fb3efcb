package workspace

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

// parseSize reads a number of bytes, bare or with a binary unit
// ("100MiB", "10 GiB", "512KiB"); flag names the option in errors.
func parseSize(flag, s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(strings.ToLower(t), strings.ToLower(u.suffix)) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.size
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("--%s: %q is not a size such as 100MiB, 10GiB or a number of bytes", flag, s)
	}
	return n * mult, nil
}

// workspaceLimitsCommands are `shoal workspace limits` and `shoal
// workspace update`: a workspace's log cap and storage quota.
func workspaceLimitsCommands(g *cmdutil.Globals) []*cobra.Command {
	var name, maxLog, quota string
	columns := []string{"workspace", "max_log_bytes", "storage_quota_bytes", "storage_used_bytes"}
	limits := &cobra.Command{
		Use:   "limits",
		Short: "Show a workspace's log cap and storage quota, and its storage use (default: the current workspace)",
		Args:  cobra.NoArgs,
		RunE: g.CallAndRender(columns, func(ctx context.Context, c *client.Client, ws string) (any, error) {
			return c.GetWorkspaceLimits(ctx, orDefault(name, ws))
		}),
	}
	limits.Flags().StringVarP(&name, "name", "n", "", "workspace name")
	update := &cobra.Command{
		Use:   "update",
		Short: "Set a workspace's log cap and storage quota (administrators; 0 restores the default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			upd := &client.WorkspaceLimitsUpdate{}
			for _, f := range []struct {
				flag, v string
				dst     **int64
			}{{"max-log-bytes", maxLog, &upd.MaxLogBytes}, {"storage-quota-bytes", quota, &upd.StorageQuotaBytes}} {
				if !cmd.Flags().Changed(f.flag) {
					continue
				}
				n, err := parseSize(f.flag, f.v)
				if err != nil {
					return err
				}
				*f.dst = &n
			}
			if upd.MaxLogBytes == nil && upd.StorageQuotaBytes == nil {
				return fmt.Errorf("nothing to change: give --max-log-bytes or --storage-quota-bytes")
			}
			c, ws, err := g.Client()
			if err != nil {
				return err
			}
			if name != "" {
				ws = name
			}
			v, err := c.UpdateWorkspaceLimits(cmd.Context(), ws, upd)
			if err != nil {
				return err
			}
			return g.Render(v, columns)
		},
	}
	update.Flags().StringVarP(&name, "name", "n", "", "workspace name")
	update.Flags().StringVar(&maxLog, "max-log-bytes", "", "cap of one rank's stored log (e.g. 100MiB; default 100MiB)")
	update.Flags().StringVar(&quota, "storage-quota-bytes", "", "storage quota of the workspace's artifacts, job outputs and logs (e.g. 10GiB; default 10GiB)")
	return []*cobra.Command{limits, update}
}
