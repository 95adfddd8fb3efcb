package job

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shoal-ml/shoal/cli/cmdutil"
	"github.com/shoal-ml/shoal/client"
)

// newJobUpdateCommand is `shoal job update`, as `az ml job update`: a
// submitted job's display name, description and tags change (its
// definition does not), with Azure's --set and --remove of those keys.
func newJobUpdateCommand(g *cmdutil.Globals) *cobra.Command {
	var sets, removes []string
	cmd, _ := jobNameCommand("update", "Update a job's display name, description or tags (what Azure lets change of a submitted job)", g, nil)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name, _ := cmd.Flags().GetString("name")
		upd, err := jobUpdateOf(sets, removes)
		if err != nil {
			return err
		}
		c, ws, err := g.Client()
		if err != nil {
			return err
		}
		j, err := c.UpdateJob(cmd.Context(), ws, name, upd)
		if err != nil {
			return err
		}
		return g.Render(j, jobColumns)
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a field: --set tags.team=ml, --set description=..., --set display_name=... (repeatable)")
	cmd.Flags().StringArrayVar(&removes, "remove", nil, "remove a tag: --remove tags.team (repeatable)")
	return cmd
}

// jobUpdateOf reads --set and --remove into an update; a key other than
// the fields a job's update changes is refused naming it.
func jobUpdateOf(sets, removes []string) (*client.JobUpdate, error) {
	upd := &client.JobUpdate{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("--set %q: want KEY=VALUE", s)
		}
		switch {
		case k == "description":
			upd.Description = &v
		case k == "display_name":
			upd.DisplayName = &v
		case strings.HasPrefix(k, "tags.") && len(k) > len("tags."):
			if upd.SetTags == nil {
				upd.SetTags = map[string]string{}
			}
			upd.SetTags[strings.TrimPrefix(k, "tags.")] = v
		default:
			return nil, fmt.Errorf("--set %s: a job's update changes description, display_name and tags.<name> only; its definition does not change (submit a new job)", k)
		}
	}
	for _, k := range removes {
		t, ok := strings.CutPrefix(k, "tags.")
		if !ok || t == "" {
			return nil, fmt.Errorf("--remove %s: only tags.<name> can be removed", k)
		}
		upd.RemoveTags = append(upd.RemoveTags, t)
	}
	if upd.Description == nil && upd.DisplayName == nil && len(upd.SetTags) == 0 && len(upd.RemoveTags) == 0 {
		return nil, fmt.Errorf("nothing to update: give --set or --remove")
	}
	return upd, nil
}
