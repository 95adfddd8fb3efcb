package scheduler

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// schedulePaged schedules the one cluster of s a page of its queue at a
// time, as a pass over a long queue does: in queue order, never splitting
// jobs of equal priority and seq, carrying the nodes left free, the busy
// count and Result.Blocked from each page to the next.
func schedulePaged(s Snapshot, key string, pageOf func() int) Result {
	jobs := slices.Clone(s.Jobs)
	slices.SortStableFunc(jobs, func(a, b Job) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	nodes := slices.Clone(s.Nodes)
	cs := s.Clusters[key]
	out := Result{Waiting: map[string]Reason{}}
	for len(jobs) > 0 {
		n := min(max(pageOf(), 1), len(jobs))
		for n < len(jobs) && jobs[n].Priority == jobs[n-1].Priority && jobs[n].Seq == jobs[n-1].Seq {
			n++
		}
		res := Schedule(Snapshot{Nodes: nodes, Jobs: jobs[:n], Clusters: map[string]ClusterState{key: cs}})
		jobs = jobs[n:]
		out.Placements = append(out.Placements, res.Placements...)
		maps.Copy(out.Waiting, res.Waiting)
		for _, p := range res.Placements {
			for _, id := range p.NodeIDs {
				for i := range nodes {
					if nodes[i].ID == id {
						nodes[i].Free = false
					}
				}
			}
			cs.Busy += len(p.NodeIDs)
		}
		if b, ok := res.Blocked[key]; ok {
			cs.Behind = b
			out.Blocked = map[string]Behind{key: b}
		}
	}
	return out
}

// A long queue scheduled a page at a time decides what it decides at
// once: the same placements in the same order and the same reason, word
// for word, for every waiting job, whatever the pages' sizes.
func TestPagesDecideWhatTheWholeQueueDoes(t *testing.T) {
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 7))
		key := "ws/c"
		cs := ClusterState{MaxInstances: r.IntN(12), Provisioning: r.IntN(3), Busy: r.IntN(4)}
		switch r.IntN(6) {
		case 0:
			cs.QuotaBlocked, cs.BlockedBy = "quota 4/4", ReasonQuota
		case 1:
			cs.Window = "max_instances is 2 in scale window w until 07:00 (UTC)"
		}
		var s Snapshot
		for i := range r.IntN(10) {
			n := Node{ID: fmt.Sprintf("n%02d", i), Cluster: key, Free: r.IntN(3) > 0, Fallback: r.IntN(5) == 0}
			if r.IntN(2) == 0 {
				n.IdleSince = base.Add(time.Duration(r.IntN(5)) * time.Minute)
			}
			s.Nodes = append(s.Nodes, n)
		}
		for i := range 1 + r.IntN(40) {
			s.Jobs = append(s.Jobs, Job{
				ID: fmt.Sprintf("ws/j%02d", i), Cluster: key,
				Priority: r.IntN(3), Seq: int64(r.IntN(30)), InstanceCount: 1 + r.IntN(4),
			})
		}
		s.Clusters = map[string]ClusterState{key: cs}
		whole := Schedule(s)
		paged := schedulePaged(s, key, func() int { return 1 + r.IntN(6) })
		if (len(whole.Placements) > 0 || len(paged.Placements) > 0) && !reflect.DeepEqual(whole.Placements, paged.Placements) {
			t.Fatalf("seed %d: placements at once %v, in pages %v", seed, whole.Placements, paged.Placements)
		}
		if !SameWaiting(whole.Waiting, paged.Waiting) {
			for id, w := range whole.Waiting {
				if !paged.Waiting[id].Same(w) {
					t.Errorf("seed %d: %s waits with %+v at once, %+v in pages", seed, id, w, paged.Waiting[id])
				}
			}
			t.Fatalf("seed %d: %d reasons at once, %d in pages", seed, len(whole.Waiting), len(paged.Waiting))
		}
		if !reflect.DeepEqual(whole.Blocked, paged.Blocked) {
			t.Fatalf("seed %d: blocked at once %v, in pages %v", seed, whole.Blocked, paged.Blocked)
		}
	}
}

// Result.Blocked names the head that could not start and how many jobs
// the next one waits behind; a snapshot given it as ClusterState.Behind
// places nothing and goes on counting.
func TestBlockedCarriesTheHeadToTheNextPage(t *testing.T) {
	key := "ws/c"
	s := Snapshot{
		Nodes: []Node{{ID: "n1", Cluster: key, Free: true}},
		Jobs: []Job{
			{ID: "ws/a", Cluster: key, Seq: 1, InstanceCount: 2},
			{ID: "ws/b", Cluster: key, Seq: 2, InstanceCount: 1},
			{ID: "ws/c", Cluster: key, Seq: 3, InstanceCount: 1},
		},
		Clusters: map[string]ClusterState{key: {MaxInstances: 4}},
	}
	res := Schedule(s)
	if want := (Behind{Head: "ws/a", Ahead: 3}); res.Blocked[key] != want {
		t.Fatalf("Blocked = %v, want %v", res.Blocked, want)
	}
	next := Snapshot{
		Nodes:    s.Nodes,
		Jobs:     []Job{{ID: "ws/d", Cluster: key, Seq: 4, InstanceCount: 1}},
		Clusters: map[string]ClusterState{key: {MaxInstances: 4, Behind: res.Blocked[key]}},
	}
	res = Schedule(next)
	if len(res.Placements) != 0 {
		t.Errorf("a page behind a blocked head placed %v on a free node", res.Placements)
	}
	want := NewReason(ReasonBehind, "waiting behind 3 higher-priority or earlier jobs (next: ws/a)")
	if !res.Waiting["ws/d"].Same(want) {
		t.Errorf("ws/d waits with %q, want %q", res.Waiting["ws/d"].Message(), want.Message())
	}
	if b := res.Blocked[key]; b != (Behind{Head: "ws/a", Ahead: 4}) {
		t.Errorf("Blocked after the page = %v, want ws/a with 4 ahead", b)
	}
}
