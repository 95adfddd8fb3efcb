package scheduler_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/scheduler"
)

// node is a free node of cluster.
func node(id, cluster string) scheduler.Node {
	return scheduler.Node{ID: id, Cluster: cluster, Free: true}
}

// busy is a node of cluster that is not free (running, draining, preparing).
func busy(id, cluster string) scheduler.Node {
	return scheduler.Node{ID: id, Cluster: cluster}
}

// job is a queued job.
func job(id, cluster string, prio int, seq int64, n int) scheduler.Job {
	return scheduler.Job{ID: id, Cluster: cluster, Priority: prio, Seq: seq, InstanceCount: n}
}

// nodes is n free nodes of cluster named prefix0..prefix(n-1).
func nodes(prefix, cluster string, n int) []scheduler.Node {
	out := make([]scheduler.Node, n)
	for i := range out {
		out[i] = node(fmt.Sprintf("%s%d", prefix, i), cluster)
	}
	return out
}

// want is one job's expected reason: its code and a fragment of its message.
type want struct {
	code     scheduler.ReasonCode
	contains string
}

func TestSchedule(t *testing.T) {
	tests := []struct {
		name     string
		snap     scheduler.Snapshot
		placed   map[string][]string // job -> nodes, exactly
		waiting  map[string]want     // exactly these jobs wait
		exactMsg map[string]string   // optional: whole messages
	}{
		{
			name:   "idle node takes job",
			snap:   scheduler.Snapshot{Nodes: []scheduler.Node{node("n1", "c")}, Jobs: []scheduler.Job{job("j1", "c", 0, 1, 1)}},
			placed: map[string][]string{"j1": {"n1"}},
		},
		{
			name:     "no free node",
			snap:     scheduler.Snapshot{Nodes: []scheduler.Node{busy("n1", "c")}, Jobs: []scheduler.Job{job("j1", "c", 0, 1, 1)}},
			waiting:  map[string]want{"j1": {scheduler.ReasonNoNodes, "0 of 1 ready"}},
			exactMsg: map[string]string{"j1": "waiting for the autoscaler to add nodes (0 of 1 ready)"},
		},
		{
			name: "node of another cluster is not used",
			snap: scheduler.Snapshot{
				Nodes: []scheduler.Node{node("n1", "other")},
				Jobs:  []scheduler.Job{job("j1", "c", 0, 1, 1)},
			},
			waiting: map[string]want{"j1": {scheduler.ReasonNoNodes, "0 of 1 ready"}},
		},
		{
			name: "priority beats seq",
			snap: scheduler.Snapshot{
				Nodes: []scheduler.Node{node("n1", "c")},
				Jobs:  []scheduler.Job{job("early", "c", 0, 1, 1), job("urgent", "c", 5, 2, 1)},
			},
			placed:  map[string][]string{"urgent": {"n1"}},
			waiting: map[string]want{"early": {scheduler.ReasonNoNodes, "0 of 1 ready"}},
		},
		{
			name: "FIFO within a priority",
			snap: scheduler.Snapshot{
				Nodes: []scheduler.Node{node("n1", "c")},
				Jobs:  []scheduler.Job{job("second", "c", 3, 2, 1), job("first", "c", 3, 1, 1)},
			},
			placed:  map[string][]string{"first": {"n1"}},
			waiting: map[string]want{"second": {scheduler.ReasonNoNodes, "0 of 1 ready"}},
		},
		{
			name: "gang gets nodes in ID order, rank 0 smallest",
			snap: scheduler.Snapshot{
				Nodes: []scheduler.Node{node("n3", "c"), node("n1", "c"), busy("n0", "c"), node("n2", "c")},
				Jobs:  []scheduler.Job{job("a", "c", 0, 1, 2), job("b", "c", 0, 2, 1)},
			},
			placed: map[string][]string{"a": {"n1", "n2"}, "b": {"n3"}},
		},
		{
			name:     "gang all or nothing",
			snap:     scheduler.Snapshot{Nodes: nodes("n", "c", 3), Jobs: []scheduler.Job{job("big", "c", 0, 1, 4)}},
			waiting:  map[string]want{"big": {scheduler.ReasonGangIncomplete, "3 of 4"}},
			exactMsg: map[string]string{"big": "waiting for all 4 nodes of the gang (3 of 4 ready, 0 provisioning)"},
		},
		{
			name: "strict ordering: multi-node head is not starved by a later small job",
			snap: scheduler.Snapshot{
				Nodes: nodes("n", "c", 2),
				Jobs:  []scheduler.Job{job("big", "c", 0, 1, 4), job("small", "c", 0, 2, 1)},
			},
			waiting: map[string]want{
				"big":   {scheduler.ReasonGangIncomplete, "2 of 4 ready"},
				"small": {scheduler.ReasonBehind, "next: big"},
			},
			exactMsg: map[string]string{"small": "waiting behind 1 higher-priority or earlier job (next: big)"},
		},
		{
			name: "higher-priority small job submitted later goes first",
			snap: scheduler.Snapshot{
				Nodes: nodes("n", "c", 2),
				Jobs:  []scheduler.Job{job("big", "c", 0, 1, 4), job("small", "c", 1, 2, 1)},
			},
			placed:  map[string][]string{"small": {"n0"}},
			waiting: map[string]want{"big": {scheduler.ReasonGangIncomplete, "1 of 4 ready"}},
		},
		{
			name: "behind counts jobs ahead and names the blocked head",
			snap: scheduler.Snapshot{
				Nodes: nodes("n", "c", 1),
				Jobs: []scheduler.Job{
					job("runs", "c", 9, 1, 1), job("head", "c", 0, 2, 2),
					job("b1", "c", 0, 3, 1), job("b2", "c", 0, 4, 1), job("b3", "c", 0, 5, 1),
				},
			},
			placed: map[string][]string{"runs": {"n0"}},
			waiting: map[string]want{
				"head": {scheduler.ReasonNoNodes, "0 of 2 ready"},
				"b1":   {scheduler.ReasonBehind, "behind 1 "},
				"b2":   {scheduler.ReasonBehind, "behind 2 "},
				"b3":   {scheduler.ReasonBehind, "behind 3 "},
			},
			exactMsg: map[string]string{"b3": "waiting behind 3 higher-priority or earlier jobs (next: head)"},
		},
		{
			name: "quota blocks when free+provisioning is short",
			snap: scheduler.Snapshot{
				Nodes:    nodes("n", "c", 1),
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 4)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 10, Provisioning: 1, QuotaBlocked: "dedicated quota standardDSv2Family 16/16 vCPUs in local"}},
			},
			waiting:  map[string]want{"j": {scheduler.ReasonQuota, "standardDSv2Family"}},
			exactMsg: map[string]string{"j": "quota exhausted: dedicated quota standardDSv2Family 16/16 vCPUs in local"},
		},
		{
			// The block's kind follows BlockedBy, not its wording: a
			// budget block worded without "budget " is still a budget.
			name: "a budget block is told by its code",
			snap: scheduler.Snapshot{
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 1)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 10, QuotaBlocked: "spending limit of team ml reached", BlockedBy: scheduler.ReasonBudget}},
			},
			waiting:  map[string]want{"j": {scheduler.ReasonBudget, "spending limit"}},
			exactMsg: map[string]string{"j": "spending limit of team ml reached: no new nodes until the next period or a higher limit; running jobs finish"},
		},
		{
			// ... and a quota block that happens to start with "budget "
			// is still a quota.
			name: "a quota block worded like a budget is a quota",
			snap: scheduler.Snapshot{
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 1)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 10, QuotaBlocked: "budget family quota 8/8 vCPUs", BlockedBy: scheduler.ReasonQuota}},
			},
			waiting:  map[string]want{"j": {scheduler.ReasonQuota, "budget family"}},
			exactMsg: map[string]string{"j": "quota exhausted: budget family quota 8/8 vCPUs"},
		},
		{
			name: "a stopped instance says so",
			snap: scheduler.Snapshot{
				Jobs:     []scheduler.Job{job("j", "ci", 0, 1, 1)},
				Clusters: map[string]scheduler.ClusterState{"ci": {MaxInstances: 4, Unavailable: "instance stopped: start it"}},
			},
			waiting:  map[string]want{"j": {scheduler.ReasonUnavailable, "start it"}},
			exactMsg: map[string]string{"j": "instance stopped: start it"},
		},
		{
			name: "quota does not matter when provisioning nodes suffice",
			snap: scheduler.Snapshot{
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 2)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 10, Provisioning: 2, QuotaBlocked: "quota"}},
			},
			waiting:  map[string]want{"j": {scheduler.ReasonProvisioning, "0 of 2 ready"}},
			exactMsg: map[string]string{"j": "waiting for nodes to be provisioned (0 of 2 ready)"},
		},
		{
			name: "a provisioning node's provider note is in the reason",
			snap: scheduler.Snapshot{
				Jobs: []scheduler.Job{job("j", "c", 0, 1, 1)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 2, Provisioning: 1,
					ProvisioningNote: "node c-n1: pod shoal-c-n1 Pending: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."}},
			},
			waiting: map[string]want{"j": {scheduler.ReasonProvisioning, "Insufficient cpu"}},
			exactMsg: map[string]string{"j": "waiting for nodes to be provisioned (0 of 1 ready); " +
				"node c-n1: pod shoal-c-n1 Pending: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."},
		},
		{
			name: "provisioning while the cluster can still grow",
			snap: scheduler.Snapshot{
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 4)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 10, Provisioning: 1}},
			},
			waiting: map[string]want{"j": {scheduler.ReasonProvisioning, "0 of 4 ready"}},
		},
		{
			name: "gang with free and provisioning nodes",
			snap: scheduler.Snapshot{
				Nodes:    nodes("n", "c", 3),
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 4)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 4, Provisioning: 1}},
			},
			waiting:  map[string]want{"j": {scheduler.ReasonGangIncomplete, "3 of 4 ready, 1 provisioning"}},
			exactMsg: map[string]string{"j": "waiting for all 4 nodes of the gang (3 of 4 ready, 1 provisioning)"},
		},
		{
			name: "at max: nodes placed this pass count as busy",
			snap: scheduler.Snapshot{
				Nodes:    nodes("n", "c", 1),
				Jobs:     []scheduler.Job{job("a", "c", 1, 1, 1), job("b", "c", 0, 2, 1)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 2, Busy: 1}},
			},
			placed:   map[string][]string{"a": {"n0"}},
			waiting:  map[string]want{"b": {scheduler.ReasonAtMax, "2 of 2"}},
			exactMsg: map[string]string{"b": "cluster is at max_instances (2 of 2 nodes busy)"},
		},
		{
			name: "at max beats provisioning when provisioning cannot complete the gang",
			snap: scheduler.Snapshot{
				Nodes:    nodes("n", "c", 1),
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 4)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 4, Busy: 2, Provisioning: 1}},
			},
			waiting: map[string]want{"j": {scheduler.ReasonAtMax, "2 of 4 nodes busy"}},
		},
		{
			name: "no nodes: the autoscaler has to add some",
			snap: scheduler.Snapshot{
				Jobs:     []scheduler.Job{job("j", "c", 0, 1, 2)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 4}},
			},
			waiting: map[string]want{"j": {scheduler.ReasonNoNodes, "0 of 2 ready"}},
		},
		{
			name: "job larger than max_instances does not block the queue",
			snap: scheduler.Snapshot{
				Nodes:    nodes("n", "c", 2),
				Jobs:     []scheduler.Job{job("huge", "c", 5, 1, 3), job("ok", "c", 0, 2, 1)},
				Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 2}},
			},
			placed:  map[string][]string{"ok": {"n0"}},
			waiting: map[string]want{"huge": {scheduler.ReasonAtMax, "needs 3 nodes but the cluster's max_instances is 2"}},
		},
		{
			name: "clusters are independent",
			snap: scheduler.Snapshot{
				Nodes: append(nodes("a", "c1", 1), nodes("b", "c2", 1)...),
				Jobs:  []scheduler.Job{job("big", "c1", 0, 1, 2), job("small1", "c1", 0, 2, 1), job("small2", "c2", 0, 3, 1)},
			},
			placed: map[string][]string{"small2": {"b0"}},
			waiting: map[string]want{
				"big":    {scheduler.ReasonGangIncomplete, "1 of 2 ready"},
				"small1": {scheduler.ReasonBehind, "next: big"},
			},
		},
		{
			name: "duplicate node is used once",
			snap: scheduler.Snapshot{
				Nodes: []scheduler.Node{node("n", "c"), node("n", "c")},
				Jobs:  []scheduler.Job{job("a", "c", 0, 1, 1), job("b", "c", 0, 2, 1)},
			},
			placed:  map[string][]string{"a": {"n"}},
			waiting: map[string]want{"b": {scheduler.ReasonNoNodes, "0 of 1 ready"}},
		},
		{
			name:   "instance count below 1 needs one node",
			snap:   scheduler.Snapshot{Nodes: nodes("n", "c", 1), Jobs: []scheduler.Job{job("j", "c", 0, 1, 0)}},
			placed: map[string][]string{"j": {"n0"}},
		},
		{
			name: "empty snapshot",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := scheduler.Schedule(tt.snap)
			placed := map[string][]string{}
			for _, p := range res.Placements {
				placed[p.JobID] = p.NodeIDs
			}
			if len(placed) != len(tt.placed) || (len(placed) > 0 && !reflect.DeepEqual(placed, tt.placed)) {
				t.Errorf("placed %v, want %v", placed, tt.placed)
			}
			if len(res.Waiting) != len(tt.waiting) {
				t.Errorf("waiting %v, want %d jobs %v", res.Waiting, len(tt.waiting), tt.waiting)
			}
			for id, w := range tt.waiting {
				got, ok := res.Waiting[id]
				if !ok {
					t.Errorf("%s: no reason, want %s", id, w.code)
					continue
				}
				if got.Code() != w.code || !strings.Contains(got.Message(), w.contains) {
					t.Errorf("%s: got %s %q, want %s containing %q", id, got.Code(), got.Message(), w.code, w.contains)
				}
			}
			for id, msg := range tt.exactMsg {
				if got := res.Waiting[id].Message(); got != msg {
					t.Errorf("%s: message %q, want %q", id, got, msg)
				}
			}
			checkInvariants(t, tt.snap, res)
		})
	}
}

// TestEveryReasonCode checks that every reason code is reachable, each from
// the smallest snapshot that produces it.
func TestEveryReasonCode(t *testing.T) {
	seen := map[scheduler.ReasonCode]bool{}
	snaps := []scheduler.Snapshot{
		{Jobs: []scheduler.Job{job("j", "c", 0, 1, 1)}, Clusters: map[string]scheduler.ClusterState{"c": {Provisioning: 1}}},
		{Jobs: []scheduler.Job{job("j", "c", 0, 1, 1)}, Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 1, Busy: 1}}},
		{Jobs: []scheduler.Job{job("j", "c", 0, 1, 1)}, Clusters: map[string]scheduler.ClusterState{"c": {QuotaBlocked: "q"}}},
		{Jobs: []scheduler.Job{job("j", "c", 0, 1, 1), job("k", "c", 0, 2, 1)}},
		{Nodes: nodes("n", "c", 1), Jobs: []scheduler.Job{job("j", "c", 0, 1, 2)}},
		{Nodes: []scheduler.Node{{ID: "n", Cluster: "c", Free: true, Image: "a"}}, Jobs: []scheduler.Job{{ID: "j", Cluster: "c", InstanceCount: 1, Image: "b"}}, Clusters: map[string]scheduler.ClusterState{"c": {NodeImages: true}}},
		{Jobs: []scheduler.Job{job("j", "c", 0, 1, 2)}, Clusters: map[string]scheduler.ClusterState{"c": {QuotaBlocked: "g", BlockedBy: scheduler.ReasonGangTimeout}}},
		{Jobs: []scheduler.Job{job("j", "c", 0, 1, 1)}, Clusters: map[string]scheduler.ClusterState{"c": {Window: "w"}}},
	}
	for _, s := range snaps {
		for _, r := range scheduler.Schedule(s).Waiting {
			seen[r.Code()] = true
		}
	}
	for _, c := range []scheduler.ReasonCode{
		scheduler.ReasonProvisioning, scheduler.ReasonAtMax, scheduler.ReasonQuota,
		scheduler.ReasonBehind, scheduler.ReasonGangIncomplete, scheduler.ReasonNoNodes,
		scheduler.ReasonImageMismatch, scheduler.ReasonGangTimeout, scheduler.ReasonScaleWindow,
	} {
		if !seen[c] {
			t.Errorf("reason %s never produced", c)
		}
	}
}

func TestDeterministic(t *testing.T) {
	s := randomSnapshot(rand.New(rand.NewPCG(1, 2)), 200, 60, 4)
	first := scheduler.Schedule(s)
	for range 3 {
		if again := scheduler.Schedule(s); !sameResult(first, again) {
			t.Fatal("two passes over the same snapshot differ")
		}
	}
}

// sameResult reports whether two passes placed the same jobs on the same
// nodes, blocked the same queues and gave every waiting job a reason
// that says the same (Reason has no ==, and reflect.DeepEqual would look
// at the first byte of each reason's text alone).
func sameResult(a, b scheduler.Result) bool {
	return reflect.DeepEqual(a.Placements, b.Placements) && reflect.DeepEqual(a.Blocked, b.Blocked) && scheduler.SameWaiting(a.Waiting, b.Waiting)
}

func TestInputOrderDoesNotMatter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		s := randomSnapshot(r, 100, 40, 3)
		want := scheduler.Schedule(s)
		shuffled := scheduler.Snapshot{Nodes: slices.Clone(s.Nodes), Jobs: slices.Clone(s.Jobs), Clusters: s.Clusters}
		r.Shuffle(len(shuffled.Nodes), func(a, b int) { shuffled.Nodes[a], shuffled.Nodes[b] = shuffled.Nodes[b], shuffled.Nodes[a] })
		r.Shuffle(len(shuffled.Jobs), func(a, b int) { shuffled.Jobs[a], shuffled.Jobs[b] = shuffled.Jobs[b], shuffled.Jobs[a] })
		if got := scheduler.Schedule(shuffled); !sameResult(want, got) {
			t.Fatalf("snapshot %d: shuffling the input changed the result", i)
		}
	}
}

func TestScheduleDoesNotModifySnapshot(t *testing.T) {
	s := randomSnapshot(rand.New(rand.NewPCG(3, 4)), 100, 40, 3)
	nodesBefore, jobsBefore := slices.Clone(s.Nodes), slices.Clone(s.Jobs)
	scheduler.Schedule(s)
	if !slices.Equal(nodesBefore, s.Nodes) || !slices.Equal(jobsBefore, s.Jobs) {
		t.Fatal("Schedule modified its input")
	}
}

// TestRandomSnapshots checks the invariants on many random snapshots.
func TestRandomSnapshots(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		s := randomSnapshot(r, 1+r.IntN(300), r.IntN(120), 1+r.IntN(5))
		res := scheduler.Schedule(s)
		if t.Failed() {
			break
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkInvariants(t, s, res) })
	}
}

// randomSnapshot builds jobs and nodes over up to clusters clusters, some
// with a ClusterState and some without, with small priority and gang ranges
// so ties, gangs and blocked heads are all common.
func randomSnapshot(r *rand.Rand, jobs, nodeCount, clusters int) scheduler.Snapshot {
	s := scheduler.Snapshot{Clusters: map[string]scheduler.ClusterState{}}
	name := func() string { return fmt.Sprintf("ws/c%d", r.IntN(clusters)) }
	for i := range clusters {
		if r.IntN(3) == 0 {
			continue // no state: unlimited
		}
		s.Clusters[fmt.Sprintf("ws/c%d", i)] = scheduler.ClusterState{
			MaxInstances: r.IntN(12),
			Provisioning: r.IntN(3),
			Busy:         r.IntN(4),
			QuotaBlocked: []string{"", "", "dedicated quota exhausted"}[r.IntN(3)],
		}
	}
	for i := range nodeCount {
		s.Nodes = append(s.Nodes, scheduler.Node{ID: fmt.Sprintf("n%d", i), Cluster: name(), Free: r.IntN(4) != 0})
	}
	for i := range jobs {
		n := 1
		if r.IntN(4) == 0 {
			n = 2 + r.IntN(7)
		}
		s.Jobs = append(s.Jobs, job(fmt.Sprintf("j%d", i), name(), r.IntN(3), int64(r.IntN(jobs)), n))
	}
	return s
}

// checkInvariants checks what must hold for any snapshot: no node used
// twice; each placement has exactly InstanceCount distinct free nodes of
// the job's cluster; every job is placed or waiting, never both; and strict
// ordering: in a cluster, no placed job comes after a job that waits for
// nodes (jobs larger than max_instances excepted, as they never block).
func checkInvariants(t *testing.T, s scheduler.Snapshot, res scheduler.Result) {
	t.Helper()
	nodeByID := map[string]scheduler.Node{}
	for _, n := range s.Nodes {
		nodeByID[n.ID] = n
	}
	jobByID := map[string]scheduler.Job{}
	for _, j := range s.Jobs {
		jobByID[j.ID] = j
	}
	used := map[string]string{}
	placed := map[string]bool{}
	for _, p := range res.Placements {
		j, ok := jobByID[p.JobID]
		if !ok {
			t.Fatalf("placed unknown job %s", p.JobID)
		}
		if placed[p.JobID] {
			t.Fatalf("job %s placed twice", p.JobID)
		}
		placed[p.JobID] = true
		if want := max(j.InstanceCount, 1); len(p.NodeIDs) != want {
			t.Fatalf("job %s got %d nodes, needs %d", p.JobID, len(p.NodeIDs), want)
		}
		for _, id := range p.NodeIDs {
			n, ok := nodeByID[id]
			switch {
			case !ok:
				t.Fatalf("job %s placed on unknown node %s", p.JobID, id)
			case !n.Free:
				t.Fatalf("job %s placed on node %s which is not free", p.JobID, id)
			case n.Cluster != j.Cluster:
				t.Fatalf("job %s of %s placed on node %s of %s", p.JobID, j.Cluster, id, n.Cluster)
			case used[id] != "":
				t.Fatalf("node %s used by %s and %s", id, used[id], p.JobID)
			}
			used[id] = p.JobID
		}
	}
	for _, j := range s.Jobs {
		r, waiting := res.Waiting[j.ID]
		switch {
		case placed[j.ID] && waiting:
			t.Fatalf("job %s both placed and waiting (%s)", j.ID, r.Message())
		case !placed[j.ID] && !waiting:
			t.Fatalf("job %s neither placed nor waiting", j.ID)
		case waiting && (r.Code() == "" || r.Message() == ""):
			t.Fatalf("job %s has an empty reason %+v", j.ID, r)
		}
	}
	if len(res.Waiting)+len(res.Placements) != len(s.Jobs) {
		t.Fatalf("%d waiting + %d placed != %d jobs", len(res.Waiting), len(res.Placements), len(s.Jobs))
	}

	// Strict ordering, per cluster, in queue order, among jobs that want
	// the same nodes: a job that cannot start keeps the jobs behind it
	// that could use its nodes (any, without images) from starting.
	byCluster := map[string][]scheduler.Job{}
	for _, j := range s.Jobs {
		byCluster[j.Cluster] = append(byCluster[j.Cluster], j)
	}
	for c, jobs := range byCluster {
		overlap := func(a, b string) bool { return !s.Clusters[c].NodeImages || a == "" || b == "" || a == b }
		slices.SortFunc(jobs, func(a, b scheduler.Job) int {
			return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.Seq, b.Seq), strings.Compare(a.ID, b.ID))
		})
		var blocked []scheduler.Job
		for _, j := range jobs {
			r := res.Waiting[j.ID]
			tooBig := r.Code() == scheduler.ReasonAtMax && strings.Contains(r.Message(), "cannot start")
			first := ""
			for _, b := range blocked {
				if overlap(b.Image, j.Image) {
					first = b.ID
					break
				}
			}
			switch {
			case placed[j.ID]:
				for id, by := range used {
					if by != j.ID {
						continue
					}
					for _, b := range blocked {
						if overlap(nodeByID[id].Image, b.Image) {
							t.Fatalf("cluster %s: %s placed on %s, which blocked %s ahead could use", c, j.ID, id, b.ID)
						}
					}
				}
			case tooBig:
			case first == "":
				if r.Code() == scheduler.ReasonBehind {
					t.Fatalf("cluster %s: head %s has reason %q", c, j.ID, r.Message())
				}
				blocked = append(blocked, j)
			case r.Code() != scheduler.ReasonBehind || !strings.HasSuffix(r.Message(), "(next: "+first+")"):
				t.Fatalf("cluster %s: %s behind %s has reason %s %q", c, j.ID, first, r.Code(), r.Message())
			default:
				blocked = append(blocked, j)
			}
		}
	}
}

// TestBehindCounts checks the count and wording of every ReasonBehind
// message of a long queue: singular for 1, plural after, past 2 and 3 digits.
func TestBehindCounts(t *testing.T) {
	s := scheduler.Snapshot{Jobs: []scheduler.Job{job("head", "c", 1, 0, 1)}}
	for i := range 150 {
		s.Jobs = append(s.Jobs, job(fmt.Sprintf("j%03d", i), "c", 0, int64(i), 1))
	}
	res := scheduler.Schedule(s)
	for i := range 150 {
		id, want := fmt.Sprintf("j%03d", i), fmt.Sprintf("waiting behind %d higher-priority or earlier jobs (next: head)", i+1)
		if i == 0 {
			want = "waiting behind 1 higher-priority or earlier job (next: head)"
		}
		if got := res.Waiting[id]; got.Code() != scheduler.ReasonBehind || got.Message() != want {
			t.Fatalf("%s: got %s %q, want %q", id, got.Code(), got.Message(), want)
		}
	}
}

// TestWideSeqRange covers queues whose priority and seq ranges are too wide
// to pack into one integer key (e.g. seq as Unix nanoseconds, extreme
// priorities): the order must be the same as for narrow ranges.
func TestWideSeqRange(t *testing.T) {
	s := scheduler.Snapshot{
		Nodes: nodes("n", "c", 3),
		Jobs: []scheduler.Job{
			job("late", "c", 0, math.MaxInt64, 1),
			job("early", "c", 0, math.MinInt64, 1),
			job("top", "c", math.MaxInt, 5, 1),
			job("bottom", "c", math.MinInt, 0, 1),
			job("tie-b", "c", 0, 7, 1),
			job("tie-a", "c", 0, 7, 1),
		},
	}
	res := scheduler.Schedule(s)
	var got []string
	for _, p := range res.Placements {
		got = append(got, p.JobID)
	}
	if want := []string{"top", "early", "tie-a"}; !slices.Equal(got, want) {
		t.Fatalf("placed %v, want %v", got, want)
	}
	if r := res.Waiting["bottom"]; r.Message() != "waiting behind 2 higher-priority or earlier jobs (next: tie-b)" {
		t.Fatalf("bottom: %q", r.Message())
	}
	checkInvariants(t, s, res)
}

// A job takes the free node idle longest; nodes idle equally long (or
// without a time) go by ID.
func TestIdleLongestFirst(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	idle := func(id string, d time.Duration) scheduler.Node {
		return scheduler.Node{ID: id, Cluster: "c", Free: true, IdleSince: t0.Add(d)}
	}
	res := scheduler.Schedule(scheduler.Snapshot{
		Nodes: []scheduler.Node{idle("a", 3*time.Minute), idle("b", time.Minute), idle("c", 2*time.Minute), idle("d", time.Minute)},
		Jobs:  []scheduler.Job{job("j1", "c", 0, 1, 1), job("j2", "c", 0, 2, 1), job("j3", "c", 0, 3, 1)},
	})
	var got []string
	for _, p := range res.Placements {
		got = append(got, p.JobID+"→"+p.NodeIDs[0])
	}
	if want := "j1→b j2→d j3→c"; strings.Join(got, " ") != want {
		t.Errorf("placements %v, want %s", got, want)
	}
}

// A fallback node (a dedicated node of a low-priority cluster) is taken
// only when no other free node is left, however long it has been idle.
func TestFallbackNodesLast(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := scheduler.Schedule(scheduler.Snapshot{
		Nodes: []scheduler.Node{
			{ID: "ded", Cluster: "c", Free: true, IdleSince: t0, Fallback: true},
			{ID: "low1", Cluster: "c", Free: true, IdleSince: t0.Add(time.Minute)},
			{ID: "low2", Cluster: "c", Free: true, IdleSince: t0.Add(2 * time.Minute)},
		},
		Jobs: []scheduler.Job{job("j1", "c", 0, 1, 1), job("j2", "c", 0, 2, 1), job("j3", "c", 0, 3, 1)},
	})
	var got []string
	for _, p := range res.Placements {
		got = append(got, p.JobID+"→"+p.NodeIDs[0])
	}
	if want := "j1→low1 j2→low2 j3→ded"; strings.Join(got, " ") != want {
		t.Errorf("placements %v, want %s", got, want)
	}
}
