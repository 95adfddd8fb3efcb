package autoscaler_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/decide/autoscaler"
)

// imagedNode is n with image img.
func imagedNode(n autoscaler.Node, img string) autoscaler.Node {
	n.Image = img
	return n
}

// kube is a cluster whose nodes run one image each, max 4.
func kube(mod func(c *autoscaler.Cluster)) autoscaler.Cluster {
	return cluster("kube", func(c *autoscaler.Cluster) {
		c.NodeImages, c.MaxInstances = true, 4
		mod(c)
	})
}

func TestImageDemand(t *testing.T) {
	tests := []struct {
		name        string
		c           autoscaler.Cluster
		wantImages  []string // of the one scale-up ("nil": none)
		wantRelease []string
	}{
		{name: "a queue of two images gets nodes of both, in queue order",
			c: kube(func(c *autoscaler.Cluster) {
				c.QueuedNodeDemand = 3
				c.ImageDemand = []autoscaler.ImageDemand{{Image: "img/b", Nodes: 1}, {Image: "img/a", Nodes: 2}}
			}),
			wantImages: []string{"img/b", "img/a", "img/a"}},
		{name: "an idle node of another image does not cover demand (and goes after its idle time)",
			c: kube(func(c *autoscaler.Cluster) {
				c.QueuedNodeDemand = 1
				c.ImageDemand = []autoscaler.ImageDemand{{Image: "img/a", Nodes: 1}}
				c.Nodes = []autoscaler.Node{imagedNode(idle("b1", at(0)), "img/b")}
			}),
			wantImages: []string{"img/a"}, wantRelease: []string{"b1"}},
		{name: "nodes of the image, idle or preparing, cover its demand",
			c: kube(func(c *autoscaler.Cluster) {
				c.QueuedNodeDemand = 2
				c.ImageDemand = []autoscaler.ImageDemand{{Image: "img/a", Nodes: 2}}
				c.Nodes = []autoscaler.Node{imagedNode(idle("a1", at(0)), "img/a"), imagedNode(preparing("a2", at(0)), "img/a")}
			})},
		{name: "jobs of no image take the nodes left, then get the default image",
			c: kube(func(c *autoscaler.Cluster) {
				c.QueuedNodeDemand = 3
				c.ImageDemand = []autoscaler.ImageDemand{{Image: "", Nodes: 2}, {Image: "img/a", Nodes: 1}}
				c.Nodes = []autoscaler.Node{imagedNode(idle("b1", at(0)), "img/b")}
			}),
			wantImages: []string{"img/a", ""}},
		{name: "capped at max_instances",
			c: kube(func(c *autoscaler.Cluster) {
				c.MaxInstances = 2
				c.QueuedNodeDemand = 3
				c.ImageDemand = []autoscaler.ImageDemand{{Image: "img/a", Nodes: 1}, {Image: "img/b", Nodes: 2}}
			}),
			wantImages: []string{"img/a", "img/b"}},
		{name: "at max, an idle node of an image nobody wants goes after its idle time; one wanted stays",
			c: kube(func(c *autoscaler.Cluster) {
				c.MaxInstances = 2
				c.QueuedNodeDemand = 2
				c.ImageDemand = []autoscaler.ImageDemand{{Image: "img/a", Nodes: 2}}
				c.Nodes = []autoscaler.Node{imagedNode(idle("a1", at(0)), "img/a"), imagedNode(idle("b1", at(0)), "img/b")}
			}),
			wantRelease: []string{"b1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{tt.c}}, at(300*sec))
			var images []string
			var released []string
			for _, d := range ds {
				switch d.Action {
				case autoscaler.ActionScaleUp:
					if len(d.Images) != d.Count {
						t.Errorf("scale-up of %d with images %q", d.Count, d.Images)
					}
					images = append(images, d.Images...)
				case autoscaler.ActionRelease:
					released = append(released, d.NodeIDs...)
				}
			}
			if !reflect.DeepEqual(images, tt.wantImages) || !reflect.DeepEqual(released, tt.wantRelease) {
				t.Errorf("added %q, released %q; want %q, %q (decisions %+v)", images, released, tt.wantImages, tt.wantRelease, ds)
			}
		})
	}
}

// A cluster without NodeImages plans as before: the images of its demand
// and nodes are not looked at.
func TestNoNodeImagesIgnoresImages(t *testing.T) {
	c := cluster("cpu", func(c *autoscaler.Cluster) {
		c.QueuedNodeDemand = 1
		c.ImageDemand = []autoscaler.ImageDemand{{Image: "img/a", Nodes: 1}}
		c.Nodes = []autoscaler.Node{imagedNode(idle("b1", at(0)), "img/b")}
	})
	if ds := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{c}}, at(10*sec)); len(ds) != 0 {
		t.Errorf("decisions %+v; want none (the idle node takes the job)", ds)
	}
}

func TestGangTimeout(t *testing.T) {
	gang := func(mod func(c *autoscaler.Cluster)) autoscaler.Cluster {
		return kube(func(c *autoscaler.Cluster) {
			c.GangTimeout, c.GangDemand, c.QueuedNodeDemand = 60*sec, 2, 2
			c.ImageDemand = []autoscaler.ImageDemand{{Image: "img/a", Nodes: 2}}
			c.Nodes = []autoscaler.Node{imagedNode(idle("a1", at(10*sec)), "img/a"), imagedNode(preparing("a2", at(0)), "img/a"),
				imagedNode(node("r1", autoscaler.NodeRunning), "img/b")}
			mod(c)
		})
	}
	t.Run("a node preparing past the timeout releases the whole gang at once", func(t *testing.T) {
		ds := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{gang(func(*autoscaler.Cluster) {})}}, at(60*sec))
		if len(ds) != 1 || ds[0].Action != autoscaler.ActionRelease || ds[0].Code != autoscaler.ReasonGangTimeout ||
			!reflect.DeepEqual(ds[0].NodeIDs, []string{"a1", "a2"}) || ds[0].From != 3 || ds[0].To != 1 {
			t.Fatalf("decisions %+v; want one gang_timeout release of a1 and a2", ds)
		}
		if want := "a gang of 2 nodes did not come up whole within gang_timeout 1m0s (1 ready, 1 still preparing; a2 for 60 s)"; !strings.Contains(ds[0].Reason, want) {
			t.Errorf("reason %q; want it to contain %q", ds[0].Reason, want)
		}
	})
	t.Run("before the timeout nothing is released", func(t *testing.T) {
		if ds := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{gang(func(*autoscaler.Cluster) {})}}, at(59*sec)); len(ds) != 0 {
			t.Errorf("decisions %+v; want none", ds)
		}
	})
	t.Run("no gang queued: a slow node is the join timeout's business", func(t *testing.T) {
		c := gang(func(c *autoscaler.Cluster) { c.GangDemand = 1 })
		if ds := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{c}}, at(600*sec)); len(ds) != 0 {
			t.Errorf("decisions %+v; want none", ds)
		}
	})
	t.Run("while the backoff runs, scale-up is blocked with the reason", func(t *testing.T) {
		c := gang(func(c *autoscaler.Cluster) { c.Nodes, c.GangHeld = nil, "gang released; retrying at 00:02:00" })
		ds := autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{c}}, at(90*sec))
		if len(ds) != 1 || ds[0].Action != autoscaler.ActionBlocked || ds[0].Code != autoscaler.ReasonGangTimeout || ds[0].Count != 2 || ds[0].Reason != c.GangHeld {
			t.Fatalf("decisions %+v; want one gang_timeout block of 2", ds)
		}
	})
}
