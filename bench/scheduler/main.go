// Command scheduler measures scheduler.Schedule on a large snapshot: 100,000
// queued jobs over 10 clusters of 1,000 free nodes each. It runs 5 passes and
// prints the median throughput, time and allocation of one pass.
//
// Only one job fits on a node, so a pass places at most 10,000 jobs (fewer,
// since some are multi-node gangs); placements/s counts placements actually
// made, and the output says how many jobs waited and why.
package main

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/decide/scheduler/schedulertest"
)

// Size of the snapshot.
const (
	clusters = 10
	nodes    = 10_000 // free nodes, nodes/clusters per cluster
	jobs     = 100_000
	runs     = 5
)

func main() {
	s := schedulertest.Large(clusters, nodes, jobs)
	var (
		took  []time.Duration
		alloc []uint64
		res   scheduler.Result
	)
	for range runs {
		// Start every pass from a collected heap, and read MemStats outside
		// the timed region since it stops the world.
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		res = scheduler.Schedule(s)
		d := time.Since(start)
		runtime.ReadMemStats(&after)
		took = append(took, d)
		alloc = append(alloc, after.TotalAlloc-before.TotalAlloc)
	}
	slices.Sort(took)
	slices.Sort(alloc)
	med, medAlloc := took[runs/2], alloc[runs/2]

	placed, used := len(res.Placements), 0
	for _, p := range res.Placements {
		used += len(p.NodeIDs)
	}
	byCode := map[scheduler.ReasonCode]int{}
	for _, r := range res.Waiting {
		byCode[r.Code()]++
	}
	var codes []string
	for _, c := range slices.Sorted(maps.Keys(byCode)) {
		codes = append(codes, fmt.Sprintf("%d %s", byCode[c], c))
	}

	fmt.Printf("scheduler: %d jobs on %d nodes: median %.0f placements/s (%.1f ms/run), %.0f B/job, %.0f B/node\n",
		jobs, nodes, float64(placed)/med.Seconds(), float64(med.Microseconds())/1000,
		float64(medAlloc)/jobs, float64(medAlloc)/nodes)
	fmt.Printf("scheduler: per pass %d jobs placed on %d of %d nodes, %d waiting with a reason (%s)\n",
		placed, used, nodes, len(res.Waiting), strings.Join(codes, ", "))
	fmt.Printf("scheduler: median %.0f jobs decided/s (placed or given a reason), %.1f MB allocated/run, runs %v\n",
		float64(jobs)/med.Seconds(), float64(medAlloc)/1e6, took)
}
