package scaling

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/store"
)

// budgetBlock returns why a cluster may not scale up (a block budget of
// its workspace or of one of its tags is reached), or "".
func (c *Loop) budgetBlock(comp *compute.Compute) string {
	blocks, _ := c.s.BudgetBlocks()
	key := strings.ToLower(comp.Workspace)
	if r := blocks.Workspace[key]; r != "" {
		return r
	}
	for kv, r := range blocks.Tags[key] {
		k, v, _ := strings.Cut(kv, "=")
		if comp.Tags[k] == v {
			return r
		}
	}
	return ""
}

// applyBudgets stops scale-up where a block budget is reached: clusters of
// a blocked workspace or tag, and the node demand of a blocked user's
// queued jobs (their reason says so, from the scheduler's next pass).
func (c *Loop) applyBudgets(ctx context.Context, snap *autoscaler.Snapshot) error {
	for i := range snap.Clusters {
		cl := &snap.Clusters[i]
		ws, name, _ := strings.Cut(cl.Key, "/")
		blocks, _ := c.s.BudgetBlocks()
		if len(blocks.Workspace)+len(blocks.Tags) == 0 {
			break
		}
		var comp *compute.Compute
		err := c.s.Store().View(ctx, func(tx store.Tx) (err error) {
			comp, err = tx.GetCompute(ws, name)
			return err
		})
		if err != nil {
			continue // gone since the snapshot
		}
		cl.BudgetBlocked = c.budgetBlock(comp)
	}
	blocked, err := accounting.BlockedUserJobs(ctx, c.s)
	if err != nil {
		return err
	}
	for _, b := range blocked {
		for i := range snap.Clusters {
			if snap.Clusters[i].Key == b.Cluster {
				snap.Clusters[i].QueuedNodeDemand = max(snap.Clusters[i].QueuedNodeDemand-b.Nodes, 0)
			}
		}
	}
	return nil
}
