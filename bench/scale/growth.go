package main

import (
	"fmt"
	"time"
)

// mark is what the server holds at one moment: its RSS and its live heap
// (after a collection the bench asks for through --pprof-listen).
type mark struct {
	rss, heap int64
}

// mark waits a moment for the work just done to settle, then reads the
// server's RSS and live heap.
func (s *server) mark() mark {
	time.Sleep(2 * time.Second)
	live := s.liveHeap()
	rss, _ := s.usage()
	return mark{rss: rss, heap: live}
}

// growth is what the queue and the nodes added to the server, in all and
// per queued job and per node: the curve's columns that show where the
// memory goes as the load grows.
type growth struct {
	jobs, nodes                int
	jobRSS, jobHeap            int64 // bytes per queued job (0 with no jobs)
	nodeRSS, nodeHeap          int64 // bytes per node
	baseRSS, baseHeap, fullRSS int64
}

// growthOf divides the deltas between the marks: base (no queue, no
// nodes), queued (the queue) and loaded (the queue and n nodes at steady
// state).
func growthOf(base, queued, loaded mark, jobs, nodes int) growth {
	g := growth{jobs: jobs, nodes: nodes, baseRSS: base.rss, baseHeap: base.heap, fullRSS: loaded.rss}
	if jobs > 0 {
		g.jobRSS, g.jobHeap = (queued.rss-base.rss)/int64(jobs), (queued.heap-base.heap)/int64(jobs)
	}
	if nodes > 0 {
		g.nodeRSS, g.nodeHeap = (loaded.rss-queued.rss)/int64(nodes), (loaded.heap-queued.heap)/int64(nodes)
	}
	return g
}

func (g growth) String() string {
	jobs := "no queue"
	if g.jobs > 0 {
		jobs = fmt.Sprintf("%d B RSS and %d B live heap per queued job", g.jobRSS, g.jobHeap)
	}
	return fmt.Sprintf("empty server %.0f MB RSS, %.0f MB live heap; %s; %d B RSS and %d B live heap per node",
		mb(g.baseRSS), mb(g.baseHeap), jobs, g.nodeRSS, g.nodeHeap)
}

// liveHeap is the server's heap after a forced collection (the heap
// profile's gc=1): what it holds, without the garbage of the moment.
func (s *server) liveHeap() int64 {
	return s.readMemStats("/debug/pprof/heap?gc=1&debug=1").heapAlloc
}
