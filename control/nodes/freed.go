package nodes

import (
	"strings"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// quotaSharers returns the keys of the computes whose queued jobs the
// quota of released node n may now serve (by compute.ComputeKey): its
// own compute (which may want a node in its place), and, for a node that
// held quota, every compute of its location (the location's quotas) and,
// when its workspace has limits of its own, every compute of the
// workspace. A job slot holds no quota: its instance alone may want it.
// The quotas the autoscaler checks are the location's and the
// workspace's (autoscaler.Snapshot.Quotas and WorkspaceQuotas); a compute
// outside both was never held back by this node. A compute keeps its
// location as written (a name or an alias); location gives the catalog's
// name for it, which a node carries.
func quotaSharers(tx store.Tx, n *node.Node, location func(string) string) ([]string, error) {
	own := compute.ComputeKey(n.Workspace, n.Compute)
	if n.Role == node.NodeRoleJobSlot {
		return []string{own}, nil
	}
	wsq, err := tx.GetWorkspaceQuotas(n.Workspace)
	if err != nil {
		return nil, err
	}
	all, err := tx.ListComputes(compute.ComputeFilter{AllWorkspaces: true})
	if err != nil {
		return nil, err
	}
	keys := []string{own}
	for _, c := range all {
		key := compute.ComputeKey(c.Workspace, c.Name)
		if key == own {
			continue
		}
		if location(c.Location) == n.Location || len(wsq) > 0 && strings.EqualFold(c.Workspace, n.Workspace) {
			keys = append(keys, key)
		}
	}
	return keys, nil
}

// locationName is the catalog's name for a compute's location as
// written (a name or an alias), as the autoscaler resolves it; the name as
// given for one the catalog no longer has.
func (c *Loop) locationName(name string) string {
	if loc, err := c.s.Catalog().Location(name); err == nil {
		return loc.Name
	}
	return name
}
