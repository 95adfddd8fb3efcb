package service

import (
	"context"
	"sort"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// ClusterMetrics is one compute's state for the metrics scrape.
type ClusterMetrics struct {
	Workspace, Compute string
	Nodes              map[string]int
	Queued, Demand     int
	CostPerHour        float64
	// OldestQueuedWait is how long the compute's longest-queued job has
	// waited since its submission (0 with none queued); OldestProvisioning
	// how long its oldest node still provisioning (not joined, not a
	// machine joined by hand) has been (0 with none). The alerts compare
	// them with their thresholds.
	OldestQueuedWait, OldestProvisioning time.Duration
}

// MetricsSnapshot reads every compute's nodes by state, its queue and the
// hourly price of the nodes it holds, in one read transaction.
func (s *Services) MetricsSnapshot(ctx context.Context) ([]ClusterMetrics, error) {
	var out []ClusterMetrics
	err := s.store.View(ctx, func(tx store.Tx) error {
		st, err := scheduling.ReadNodes(tx)
		if err != nil {
			return err
		}
		// The queue in figures, summed by the store: the refs of a long
		// queue read on every scrape were a quarter of the heap.
		sums, err := tx.QueueSummaries()
		if err != nil {
			return err
		}
		now := s.Now()
		queues := make(map[string]store.QueueSummary, len(sums))
		for _, q := range sums {
			queues[q.Key] = q
		}
		for key, ci := range st.Clusters {
			c := ci.Compute
			q, ok := queues[key]
			m := ClusterMetrics{Workspace: c.Workspace, Compute: c.Name, Nodes: map[string]int{}, Queued: q.Jobs, Demand: q.Nodes}
			if ok {
				m.OldestQueuedWait = max(now.Sub(q.Oldest), 0)
			}
			for _, n := range ci.Nodes {
				m.Nodes[n.State]++
				if n.State == node.NodePreparing && n.Role != node.NodeRoleStatic {
					m.OldestProvisioning = max(m.OldestProvisioning, now.Sub(n.CreatedOn))
				}
				if n.Holds() && n.State != node.NodePreempted {
					m.CostPerHour += s.Price(n.Size, n.LowPriority)
				}
			}
			out = append(out, m)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Workspace != out[j].Workspace {
			return out[i].Workspace < out[j].Workspace
		}
		return out[i].Compute < out[j].Compute
	})
	return out, err
}
