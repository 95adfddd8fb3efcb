// Package schedulertest builds scheduler snapshots for benchmarks, so that
// the Go benchmark and bench/scheduler measure exactly the same work.
package schedulertest

import (
	"fmt"
	"math/rand/v2"

	"github.com/shoal-ml/shoal/decide/scheduler"
)

// Large returns jobs queued jobs over clusters clusters holding nodes free
// nodes in all: priorities 0-3, 90% 1-node jobs and 10% 2-8-node gangs, Seq
// in submission order, jobs and nodes shuffled so that nothing arrives
// grouped by cluster. The same arguments always give the same snapshot.
func Large(clusters, nodes, jobs int) scheduler.Snapshot {
	r := rand.New(rand.NewPCG(1, 2))
	s := scheduler.Snapshot{
		Nodes:    make([]scheduler.Node, 0, nodes),
		Jobs:     make([]scheduler.Job, 0, jobs),
		Clusters: make(map[string]scheduler.ClusterState, clusters),
	}
	names := make([]string, clusters)
	for c := range names {
		names[c] = fmt.Sprintf("ws-%d/cluster-%02d", c%3, c)
		s.Clusters[names[c]] = scheduler.ClusterState{MaxInstances: 1200, Busy: 150, Provisioning: 20}
		for n := range nodes / clusters {
			s.Nodes = append(s.Nodes, scheduler.Node{ID: fmt.Sprintf("%s/node-%04d", names[c], n), Cluster: names[c], Free: true})
		}
	}
	for i := range jobs {
		n := 1
		if r.IntN(10) == 0 {
			n = 2 + r.IntN(7)
		}
		s.Jobs = append(s.Jobs, scheduler.Job{
			ID:            fmt.Sprintf("job-%06d", i),
			Cluster:       names[r.IntN(clusters)],
			Priority:      r.IntN(4),
			Seq:           int64(i),
			InstanceCount: n,
		})
	}
	r.Shuffle(len(s.Nodes), func(a, b int) { s.Nodes[a], s.Nodes[b] = s.Nodes[b], s.Nodes[a] })
	r.Shuffle(len(s.Jobs), func(a, b int) { s.Jobs[a], s.Jobs[b] = s.Jobs[b], s.Jobs[a] })
	return s
}
