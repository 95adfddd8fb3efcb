package main

import "testing"

// The queue's growth is divided by the jobs, the nodes' (over the queue)
// by the nodes; no queue leaves the per-job figures at zero.
func TestGrowthOf(t *testing.T) {
	base := mark{rss: 100 << 20, heap: 4 << 20}
	queued := mark{rss: base.rss + 1000*300, heap: base.heap + 1000*200}
	loaded := mark{rss: queued.rss + 10*5000, heap: queued.heap + 10*4000}
	g := growthOf(base, queued, loaded, 1000, 10)
	if g.jobRSS != 300 || g.jobHeap != 200 || g.nodeRSS != 5000 || g.nodeHeap != 4000 {
		t.Errorf("growth %+v, want 300/200 B per job and 5000/4000 B per node", g)
	}
	if g := growthOf(base, base, loaded, 0, 10); g.jobRSS != 0 || g.jobHeap != 0 {
		t.Errorf("no queue: %+v, want no per-job figures", g)
	}
}

// The bench takes every CPU but the server's.
func TestBenchCPUs(t *testing.T) {
	for n, want := range map[int]string{2: "1", 4: "1-3", 16: "1-15"} {
		if got := benchCPUs(n); got != want {
			t.Errorf("benchCPUs(%d) = %q, want %q", n, got, want)
		}
	}
}
