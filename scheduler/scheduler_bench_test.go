package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/shoal-ml/shoal/scheduler"
)

// Size of the benchmark snapshot.
const (
	benchClusters = 10
	benchNodes    = 10_000 // free nodes, benchNodes/benchClusters per cluster
	benchJobs     = 100_000
)

// benchSnapshot is 100,000 queued jobs over 10 clusters of 1,000 free nodes
// each: priorities 0-3, 90% 1-node jobs and 10% 2-8-node gangs, Seq in
// submission order, jobs and nodes shuffled so nothing arrives grouped by
// cluster. At most 10,000 jobs can be placed (one per node); the rest wait
// with a reason, which is most of the work.
//
// bench/scheduler/main.go builds the same snapshot; keep the two in sync.
func benchSnapshot() scheduler.Snapshot {
	r := rand.New(rand.NewPCG(1, 2))
	s := scheduler.Snapshot{
		Nodes:    make([]scheduler.Node, 0, benchNodes),
		Jobs:     make([]scheduler.Job, 0, benchJobs),
		Clusters: make(map[string]scheduler.ClusterState, benchClusters),
	}
	names := make([]string, benchClusters)
	for c := range names {
		names[c] = fmt.Sprintf("ws-%d/cluster-%02d", c%3, c)
		s.Clusters[names[c]] = scheduler.ClusterState{MaxInstances: 1200, Busy: 150, Provisioning: 20}
		for n := range benchNodes / benchClusters {
			s.Nodes = append(s.Nodes, scheduler.Node{ID: fmt.Sprintf("%s/node-%04d", names[c], n), Cluster: names[c], Free: true})
		}
	}
	for i := range benchJobs {
		n := 1
		if r.IntN(10) == 0 {
			n = 2 + r.IntN(7)
		}
		s.Jobs = append(s.Jobs, scheduler.Job{
			ID:            fmt.Sprintf("job-%06d", i),
			Cluster:       names[r.IntN(benchClusters)],
			Priority:      r.IntN(4),
			Seq:           int64(i),
			InstanceCount: n,
		})
	}
	r.Shuffle(len(s.Nodes), func(a, b int) { s.Nodes[a], s.Nodes[b] = s.Nodes[b], s.Nodes[a] })
	r.Shuffle(len(s.Jobs), func(a, b int) { s.Jobs[a], s.Jobs[b] = s.Jobs[b], s.Jobs[a] })
	return s
}

// BenchmarkSchedule100kJobs10kNodes reports placements/s (placements
// actually made, not jobs looked at), the bytes one pass allocates per
// queued job and per node, and how many jobs one pass places.
func BenchmarkSchedule100kJobs10kNodes(b *testing.B) {
	s := benchSnapshot()

	// Measure one pass's allocation outside the timed loop: ReadMemStats
	// stops the world, which would distort the timing.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := scheduler.Schedule(s)
	runtime.ReadMemStats(&after)
	alloc := float64(after.TotalAlloc - before.TotalAlloc)
	placed := len(res.Placements)
	if placed == 0 || placed+len(res.Waiting) != benchJobs {
		b.Fatalf("%d placed + %d waiting != %d jobs", placed, len(res.Waiting), benchJobs)
	}

	b.ReportAllocs()
	for b.Loop() {
		res = scheduler.Schedule(s)
	}
	b.ReportMetric(float64(placed)*float64(b.N)/b.Elapsed().Seconds(), "placements/s")
	b.ReportMetric(float64(placed), "placed/op")
	b.ReportMetric(alloc/benchJobs, "B/job")
	b.ReportMetric(alloc/benchNodes, "B/node")
}
