package control

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/autoscaler"
	"github.com/shoal-ml/shoal/scheduler"
	"github.com/shoal-ml/shoal/service"
)

// budgetBlock returns why a cluster may not scale up (a block budget of
// its workspace or of one of its tags is reached), or "".
func (c *Controller) budgetBlock(comp *shoal.Compute) string {
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
func (c *Controller) applyBudgets(ctx context.Context, snap *autoscaler.Snapshot) error {
	for i := range snap.Clusters {
		cl := &snap.Clusters[i]
		ws, name, _ := strings.Cut(cl.Key, "/")
		blocks, _ := c.s.BudgetBlocks()
		if len(blocks.Workspace)+len(blocks.Tags) == 0 {
			break
		}
		var comp *shoal.Compute
		err := c.s.Store().View(ctx, func(tx shoal.Tx) (err error) {
			comp, err = tx.GetCompute(ws, name)
			return err
		})
		if err != nil {
			continue // gone since the snapshot
		}
		cl.BudgetBlocked = c.budgetBlock(comp)
	}
	blocked, err := c.blockedUserJobs(ctx)
	if err != nil {
		return err
	}
	for _, b := range blocked {
		for i := range snap.Clusters {
			if snap.Clusters[i].Key == b.cluster {
				snap.Clusters[i].QueuedNodeDemand = max(snap.Clusters[i].QueuedNodeDemand-b.nodes, 0)
			}
		}
	}
	return nil
}

// blockedJob is a queued job of a user whose block budget is reached.
type blockedJob struct {
	cluster string // service.ComputeKey of its compute
	nodes   int    // its instance_count
	reason  string // "budget user:alice 50 USD/week reached"
}

// blockedUserJobs returns the queued jobs, by workspace/name, of users
// whose block budget is reached; nil when no user is blocked (the common
// case costs no read).
func (c *Controller) blockedUserJobs(ctx context.Context) (map[string]blockedJob, error) {
	blocks, _ := c.s.BudgetBlocks()
	users := blocks.Users
	var out map[string]blockedJob
	for ws, blocked := range users {
		if len(blocked) == 0 {
			continue
		}
		var queued []*shoal.Job
		err := c.s.Store().View(ctx, func(tx shoal.Tx) (err error) {
			queued, err = tx.ListJobs(shoal.JobFilter{Workspace: ws, Statuses: []string{shoal.JobQueued}})
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, j := range queued {
			r := service.BlockedBy(blocked, j)
			if r == "" {
				continue
			}
			if out == nil {
				out = map[string]blockedJob{}
			}
			out[j.Workspace+"/"+j.Name] = blockedJob{cluster: service.ComputeKey(j.Workspace, j.Compute), nodes: j.InstanceCount(), reason: r}
		}
	}
	return out, nil
}

// userBudgetReasons overrides the reasons of a blocked user's waiting
// jobs: no node is added for them.
func userBudgetReasons(blocked map[string]blockedJob, waiting map[string]scheduler.Reason) {
	for id, b := range blocked {
		if _, ok := waiting[id]; ok {
			waiting[id] = scheduler.Reason{Code: scheduler.ReasonBudget, Message: b.reason + ": no new nodes for this user's jobs until the next period or a higher limit"}
		}
	}
}
