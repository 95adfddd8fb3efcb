package watch

import (
	"context"
	"fmt"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// watchProvisioning records provisioning_stuck once, on its compute, for
// each node still provisioning longer than th.ProvisioningStuckAfter
// after it was asked for. A machine joined by hand waits for a person
// running its join command, not for a provider: it is not watched.
func (l *Loop) watchProvisioning(ctx context.Context, now time.Time, th Thresholds) error {
	err := l.watchCursor(ctx, cursorProvisioning, now.Add(-th.ProvisioningStuckAfter),
		func(tx store.Tx, _, _ time.Time) ([]onset, bool, error) {
			// The preparing nodes alone: every node's document read
			// every 15 s was 10,000 decoded nodes at once on a large
			// fleet.
			nodes, err := tx.ListNodes(node.NodeFilter{State: node.NodePreparing})
			var list []onset
			for _, n := range nodes {
				if stuck(n) {
					list = append(list, onset{key: n.ID, at: n.CreatedOn})
				}
			}
			return list, true, err
		},
		func(tx store.Tx, o onset) error {
			n, err := tx.GetNode(o.key)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			if !stuck(n) {
				return nil
			}
			c := &compute.Compute{Workspace: n.Workspace}
			c.Name = n.Compute
			why := ""
			if n.StateReason != "" {
				why = ": " + n.StateReason
			}
			return compute.AppendComputeEvent(ctx, tx, c, core.EventProvisioningStuck,
				fmt.Sprintf("node %s (%s in %s) has been provisioning for %s, over the %s threshold (notifications.provisioning_stuck_after)%s",
					n.ID, n.Size, n.Location, now.Sub(n.CreatedOn).Round(time.Second), th.ProvisioningStuckAfter, why))
		})
	if err != nil {
		return fmt.Errorf("watching provisioning nodes: %w", err)
	}
	return nil
}

// stuck reports whether node n is one the provisioning watch looks at: a
// node a provider is bringing up, not yet joined.
func stuck(n *node.Node) bool {
	return n.State == node.NodePreparing && n.Role != node.NodeRoleStatic
}
