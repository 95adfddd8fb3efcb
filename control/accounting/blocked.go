package accounting

import (
	"context"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// BudgetReader is what reading the budget blocks needs: the store and
// the blocks the last budget pass found. *service.Services implements it.
type BudgetReader interface {
	// Store is the store the queued jobs are read from.
	Store() store.Store
	// BudgetBlocks are the blocking budgets found reached, and whether a
	// budget pass has run yet.
	BudgetBlocks() (money.BudgetBlocks, bool)
}

// BlockedJob is a queued job of a user whose block budget is reached.
type BlockedJob struct {
	Cluster string // service.ComputeKey of its compute
	Nodes   int    // its instance_count
	Reason  string // "budget user:alice 50 USD/week reached"
}

// BlockedUserJobs returns the queued jobs, by workspace/name, of users
// whose block budget is reached; nil when no user is blocked (the common
// case costs no read). Placement explains their wait by it and scaling
// adds no node for them.
func BlockedUserJobs(ctx context.Context, s BudgetReader) (map[string]BlockedJob, error) {
	blocks, _ := s.BudgetBlocks()
	users := blocks.Users
	var out map[string]BlockedJob
	for ws, blocked := range users {
		if len(blocked) == 0 {
			continue
		}
		var queued []*job.Job
		err := s.Store().View(ctx, func(tx store.Tx) (err error) {
			queued, err = tx.ListJobs(job.JobFilter{Workspace: ws, Statuses: []string{job.JobQueued}})
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, j := range queued {
			r := scheduling.BlockedBy(blocked, j)
			if r == "" {
				continue
			}
			if out == nil {
				out = map[string]BlockedJob{}
			}
			out[j.Workspace+"/"+j.Name] = BlockedJob{Cluster: compute.ComputeKey(j.Workspace, j.Compute), Nodes: j.InstanceCount(), Reason: r}
		}
	}
	return out, nil
}
