package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/decide/scheduler"
)

// imaged is a free node of cluster c running image img.
func imaged(id, img string) scheduler.Node {
	return scheduler.Node{ID: id, Cluster: "c", Free: true, Image: img}
}

// ijob is a queued job of cluster c of image img.
func ijob(id string, seq int64, n int, img string) scheduler.Job {
	return scheduler.Job{ID: id, Cluster: "c", Seq: seq, InstanceCount: n, Image: img}
}

func TestImages(t *testing.T) {
	tests := []struct {
		name    string
		snap    scheduler.Snapshot
		placed  map[string][]string
		waiting map[string]want
	}{
		{
			name:   "a job takes a node of its image, skipping another's",
			snap:   scheduler.Snapshot{Nodes: []scheduler.Node{imaged("a1", "img/a"), imaged("b1", "img/b")}, Jobs: []scheduler.Job{ijob("jb", 1, 1, "img/b")}},
			placed: map[string][]string{"jb": {"b1"}},
		},
		{
			name:    "a free node of another image: image_mismatch",
			snap:    scheduler.Snapshot{Nodes: []scheduler.Node{imaged("a1", "img/a")}, Jobs: []scheduler.Job{ijob("jb", 1, 1, "img/b")}, Clusters: map[string]scheduler.ClusterState{"c": {Provisioning: 1, ProvisioningNote: "node c-n2: pod Pending"}}},
			waiting: map[string]want{"jb": {scheduler.ReasonImageMismatch, "waiting for a node of its image img/b (0 of 1 ready; 1 free node(s) run other images); node c-n2: pod Pending"}},
		},
		{
			name:    "at max_instances the mismatch says the other nodes must go",
			snap:    scheduler.Snapshot{Nodes: []scheduler.Node{imaged("a1", "img/a")}, Jobs: []scheduler.Job{ijob("jb", 1, 1, "img/b")}, Clusters: map[string]scheduler.ClusterState{"c": {MaxInstances: 1}}},
			waiting: map[string]want{"jb": {scheduler.ReasonImageMismatch, "at max_instances (1)"}},
		},
		{
			name:   "a job of no image runs on a node of any image",
			snap:   scheduler.Snapshot{Nodes: []scheduler.Node{imaged("a1", "img/a")}, Jobs: []scheduler.Job{ijob("j", 1, 1, "")}},
			placed: map[string][]string{"j": {"a1"}},
		},
		{
			name: "a job of another image behind a blocked head starts on its own node",
			snap: scheduler.Snapshot{
				Nodes: []scheduler.Node{imaged("b1", "img/b"), imaged("b2", "img/b")},
				Jobs:  []scheduler.Job{ijob("ja", 1, 1, "img/a"), ijob("jb", 2, 1, "img/b"), ijob("ja2", 3, 1, "img/a")},
			},
			placed: map[string][]string{"jb": {"b1"}},
			waiting: map[string]want{
				"ja":  {scheduler.ReasonImageMismatch, "its image img/a (0 of 1 ready; 2 free node(s)"},
				"ja2": {scheduler.ReasonBehind, "waiting behind 1 higher-priority or earlier job (next: ja)"},
			},
		},
		{
			name: "a blocked gang keeps its image's free node from a job behind it",
			snap: scheduler.Snapshot{
				Nodes:    []scheduler.Node{imaged("a1", "img/a"), imaged("b1", "img/b")},
				Jobs:     []scheduler.Job{ijob("gang", 1, 2, "img/a"), ijob("ja", 2, 1, "img/a"), ijob("jb", 3, 1, "img/b")},
				Clusters: map[string]scheduler.ClusterState{"c": {Provisioning: 1}},
			},
			placed: map[string][]string{"jb": {"b1"}},
			waiting: map[string]want{
				"gang": {scheduler.ReasonImageMismatch, "(1 of 2 ready; 1 free node(s) run other images)"},
				"ja":   {scheduler.ReasonBehind, "next: gang"},
			},
		},
		{
			name: "a blocked job of no image holds every node",
			snap: scheduler.Snapshot{
				Nodes: []scheduler.Node{imaged("a1", "img/a")},
				Jobs:  []scheduler.Job{ijob("any", 1, 2, ""), ijob("ja", 2, 1, "img/a"), ijob("jb", 3, 1, "img/b")},
			},
			waiting: map[string]want{
				"any": {scheduler.ReasonGangIncomplete, "1 of 2 ready"},
				"ja":  {scheduler.ReasonBehind, "waiting behind 1 "},
				"jb":  {scheduler.ReasonBehind, "waiting behind 1 higher-priority or earlier job (next: any)"},
			},
		},
		{
			name:   "a gang takes nodes of its image only",
			snap:   scheduler.Snapshot{Nodes: []scheduler.Node{imaged("a1", "img/a"), imaged("b1", "img/b"), imaged("a2", "img/a")}, Jobs: []scheduler.Job{ijob("gang", 1, 2, "img/a")}},
			placed: map[string][]string{"gang": {"a1", "a2"}},
		},
		{
			name: "released gang: gang_timeout",
			snap: scheduler.Snapshot{Jobs: []scheduler.Job{ijob("gang", 1, 2, "img/a")},
				Clusters: map[string]scheduler.ClusterState{"c": {QuotaBlocked: "gang of 2 released", BlockedBy: scheduler.ReasonGangTimeout}}},
			waiting: map[string]want{"gang": {scheduler.ReasonGangTimeout, "gang of 2 released"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.snap.Clusters == nil {
				tt.snap.Clusters = map[string]scheduler.ClusterState{}
			}
			cs := tt.snap.Clusters["c"]
			cs.NodeImages = true
			tt.snap.Clusters["c"] = cs
			res := scheduler.Schedule(tt.snap)
			got := map[string][]string{}
			for _, p := range res.Placements {
				got[p.JobID] = p.NodeIDs
			}
			if len(got) != 0 || len(tt.placed) != 0 {
				if !reflect.DeepEqual(got, tt.placed) {
					t.Errorf("placed %v; want %v", got, tt.placed)
				}
			}
			if len(res.Waiting) != len(tt.waiting) {
				t.Errorf("waiting %v; want %v", res.Waiting, tt.waiting)
			}
			for id, w := range tt.waiting {
				r := res.Waiting[id]
				if r.Code() != w.code || !strings.Contains(r.Message(), w.contains) {
					t.Errorf("%s: %s %q; want %s containing %q", id, r.Code(), r.Message(), w.code, w.contains)
				}
			}
			checkInvariants(t, tt.snap, res)
		})
	}
}

// Nodes without an image (every provider but kubernetes) schedule as
// before when another cluster's nodes have one: the same result as the
// same cluster alone.
func TestImagelessClusterUnchangedBesideImagedOne(t *testing.T) {
	plain := scheduler.Snapshot{
		Nodes: []scheduler.Node{node("n1", "p"), node("n2", "p")},
		Jobs:  []scheduler.Job{job("g", "p", 0, 1, 3), job("s", "p", 0, 2, 1)},
	}
	alone := scheduler.Schedule(plain)
	mixed := plain
	mixed.Nodes = append(append([]scheduler.Node{}, plain.Nodes...), scheduler.Node{ID: "k1", Cluster: "k", Free: true, Image: "img/a"})
	mixed.Jobs = append(append([]scheduler.Job{}, plain.Jobs...), scheduler.Job{ID: "kj", Cluster: "k", Seq: 3, InstanceCount: 1, Image: "img/a"})
	mixed.Clusters = map[string]scheduler.ClusterState{"k": {NodeImages: true}}
	res := scheduler.Schedule(mixed)
	if !res.Waiting["g"].Same(alone.Waiting["g"]) || !res.Waiting["s"].Same(alone.Waiting["s"]) {
		t.Errorf("with an imaged cluster beside: %v; alone: %v", res.Waiting, alone.Waiting)
	}
	if len(res.Placements) != 1 || res.Placements[0].JobID != "kj" {
		t.Errorf("placements %v; want kj on k1 only", res.Placements)
	}
}

// Random snapshots whose nodes and jobs have images (or none): the
// invariants hold, strict ordering among jobs that want the same nodes
// included, and no job starts on a node of another image.
func TestRandomImagedSnapshots(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	images := []string{"", "img/a", "img/b", "img/c"}
	for i := range 300 {
		s := randomSnapshot(r, 1+r.IntN(120), r.IntN(60), 1+r.IntN(3))
		for k := range s.Nodes {
			s.Nodes[k].Image = images[1+r.IntN(3)]
			if r.IntN(8) == 0 {
				s.Nodes[k].Image = ""
			}
		}
		for k := range s.Jobs {
			s.Jobs[k].Image = images[r.IntN(4)]
		}
		for k := range 3 {
			cs := s.Clusters[fmt.Sprintf("ws/c%d", k)]
			cs.NodeImages = r.IntN(4) != 0
			s.Clusters[fmt.Sprintf("ws/c%d", k)] = cs
		}
		res := scheduler.Schedule(s)
		image := map[string]string{}
		for _, n := range s.Nodes {
			image[n.ID] = n.Image
		}
		jobImage := map[string]string{}
		for _, j := range s.Jobs {
			if s.Clusters[j.Cluster].NodeImages {
				jobImage[j.ID] = j.Image // elsewhere images are not looked at
			}
		}
		for _, p := range res.Placements {
			for _, id := range p.NodeIDs {
				if ni, ji := image[id], jobImage[p.JobID]; ni != "" && ji != "" && ni != ji {
					t.Fatalf("snapshot %d: job %s of %s placed on %s of %s", i, p.JobID, ji, id, ni)
				}
			}
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkInvariants(t, s, res) })
		if t.Failed() {
			break
		}
	}
}
