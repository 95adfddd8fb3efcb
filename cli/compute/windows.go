package compute

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/schedule"
)

// windowColumns are the columns of a cluster's scale windows under
// `compute show -o table`.
var windowColumns = []string{"window", "trigger", "min_instances", "max_instances", "in_force"}

// windowRow is one scale window in a table.
type windowRow struct {
	Window       string `json:"window"`
	Trigger      string `json:"trigger"`
	MinInstances string `json:"min_instances"`
	MaxInstances string `json:"max_instances"`
	InForce      string `json:"in_force"`
}

// showCompute prints a compute; as a table, a cluster's scale windows
// follow it, the one in force marked, then the next change. JSON, YAML
// and --query print the compute whole (scale_windows, scale_window).
func showCompute(ctx context.Context, g *cmdutil.Globals, c *client.Client, ws, name string) error {
	comp, err := c.GetCompute(ctx, ws, name)
	if err != nil {
		return err
	}
	if err := g.Render(comp, computeColumns); err != nil {
		return err
	}
	if !g.TableView() || len(comp.ScaleWindows) == 0 {
		return nil
	}
	fmt.Fprintln(g.Stdout)
	if err := g.Render(windowRows(comp), windowColumns); err != nil {
		return err
	}
	fmt.Fprintln(g.Stdout, nextChange(comp.ScaleWindow))
	return nil
}

// windowRows lists comp's windows, "yes" on the one in force.
func windowRows(comp *compute.Compute) []windowRow {
	rows := make([]windowRow, 0, len(comp.ScaleWindows))
	for _, w := range comp.ScaleWindows {
		r := windowRow{Window: w.Name, Trigger: triggerText(w.Trigger), MinInstances: bound(w.MinInstances), MaxInstances: bound(w.MaxInstances)}
		if st := comp.ScaleWindow; st != nil && st.Window != "" && strings.EqualFold(st.Window, w.Name) {
			r.InForce = "yes"
		}
		rows = append(rows, r)
	}
	return rows
}

// bound is a window's bound, or "(cluster's)" when it keeps the cluster's.
func bound(v *int) string {
	if v == nil {
		return "(cluster's)"
	}
	return fmt.Sprint(*v)
}

// triggerText writes a trigger on one line: `cron "0 20 * * *" UTC`, or
// `recurrence week interval 1 W. Europe Standard Time`.
func triggerText(t *schedule.Trigger) string {
	if t == nil {
		return ""
	}
	zone := t.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	if strings.EqualFold(t.Type, schedule.Cron) {
		return fmt.Sprintf("cron %q %s", t.Expression, zone)
	}
	return fmt.Sprintf("recurrence %s interval %d %s", t.Frequency, t.Interval, zone)
}

// nextChange is the line under the windows: the bounds in force and the
// next change.
func nextChange(st *schedule.ScaleWindowState) string {
	if st == nil {
		return "no scale window in force"
	}
	now := fmt.Sprintf("in force: min %d, max %d", st.MinInstances, st.MaxInstances)
	if st.Window != "" {
		now += " (window " + st.Window + ")"
	} else {
		now += " (the cluster's own)"
	}
	if st.NextChange == nil {
		return now + "; no change ahead"
	}
	return fmt.Sprintf("%s; next change %s (window %s)", now, st.NextChange.UTC().Format(time.RFC3339), st.NextWindow)
}
