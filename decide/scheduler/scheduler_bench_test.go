package scheduler_test

import (
	"runtime"
	"testing"

	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/decide/scheduler/schedulertest"
)

// Size of the benchmark snapshot.
const (
	benchClusters = 10
	benchNodes    = 10_000 // free nodes, benchNodes/benchClusters per cluster
	benchJobs     = 100_000
)

// benchSnapshot is 100,000 queued jobs over 10 clusters of 1,000 free nodes
// each (see schedulertest.Large, which bench/scheduler measures too). At
// most 10,000 jobs can be placed (one per node); the rest wait with a
// reason, which is most of the work.
func benchSnapshot() scheduler.Snapshot {
	return schedulertest.Large(benchClusters, benchNodes, benchJobs)
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
