package autoscaler_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/catalog"
)

// t0 is the fake clock's origin; every fixture time is an offset from it.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

const (
	sec    = time.Second
	family = "standardDSv2Family" // Standard_DS3_v2: 4 vCPUs
)

// cluster returns a dedicated DS3_v2 cluster at "local" (min 0, max 2, idle
// 120 s) changed by mod.
func cluster(key string, mod func(c *autoscaler.Cluster)) autoscaler.Cluster {
	c := autoscaler.Cluster{
		Key: "ws/" + key, Name: key,
		MinInstances: 0, MaxInstances: 2,
		IdleTimeBeforeScaleDown: 120 * sec,
		Location:                "local", Family: family, VCPUsPerNode: 4,
	}
	if mod != nil {
		mod(&c)
	}
	return c
}

func idle(id string, since time.Time) autoscaler.Node {
	return autoscaler.Node{ID: id, State: autoscaler.NodeIdle, IdleSince: since, CreatedOn: t0}
}

func node(id string, st autoscaler.NodeState) autoscaler.Node {
	return autoscaler.Node{ID: id, State: st, CreatedOn: t0}
}

func preparing(id string, created time.Time) autoscaler.Node {
	return autoscaler.Node{ID: id, State: autoscaler.NodePreparing, CreatedOn: created}
}

func scaleUp(key string, n, from int, reason string) autoscaler.Decision {
	return autoscaler.Decision{Cluster: "ws/" + key, Action: autoscaler.ActionScaleUp, Count: n, From: from, To: from + n, Reason: reason}
}

func release(key, id string, from int, reason string) autoscaler.Decision {
	return autoscaler.Decision{Cluster: "ws/" + key, Action: autoscaler.ActionRelease, NodeIDs: []string{id}, From: from, To: from - 1, Reason: reason}
}

func blocked(key string, n, live int, reason string) autoscaler.Decision {
	return autoscaler.Decision{Cluster: "ws/" + key, Action: autoscaler.ActionBlocked, Count: n, From: live, To: live, Reason: reason}
}

func kept(key, id string, live int, reason string) autoscaler.Decision {
	return autoscaler.Decision{Cluster: "ws/" + key, Action: autoscaler.ActionNone, NodeIDs: []string{id}, From: live, To: live, Reason: reason}
}

// quota returns limits for "local" with the given family limit for
// standardDSv2Family, total dedicated and low-priority limits.
func quota(fam, total, low int) map[string]catalog.QuotaLimits {
	return map[string]catalog.QuotaLimits{"local": {
		DedicatedVCPUsPerFamily:     map[string]int{family: fam},
		DefaultFamilyDedicatedVCPUs: 100,
		TotalDedicatedVCPUs:         total,
		LowPriorityVCPUs:            low,
	}}
}

func nodes(ns ...autoscaler.Node) func(c *autoscaler.Cluster) {
	return func(c *autoscaler.Cluster) { c.Nodes = ns }
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name string
		snap autoscaler.Snapshot
		now  time.Time
		want []autoscaler.Decision
	}{
		// (1) A job arrives and an idle node exists: it takes the job.
		{
			name: "job arrives, idle node takes it",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.Nodes = []autoscaler.Node{idle("n-1", at(0))}
				c.QueuedNodeDemand = 1
			})}},
			now: at(10 * sec),
		},
		{
			name: "idle node past its timeout is kept for the queued job",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.Nodes = []autoscaler.Node{idle("n-1", at(0)), idle("n-2", at(0))}
				c.QueuedNodeDemand = 1
			})}},
			now: at(300 * sec),
			want: []autoscaler.Decision{
				release("cpu", "n-1", 2, "node n-1 idle 300 s ≥ 120 s: released"),
			},
		},
		// (2) No idle node, below max: provision.
		{
			name: "scale 0→1 for one queued job",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) { c.QueuedNodeDemand = 1 })}},
			now:  at(0),
			want: []autoscaler.Decision{scaleUp("cpu", 1, 0, "scale 0→1: 1 node needed by queued jobs")},
		},
		{
			name: "scale 0→2 for 4 queued on max 2",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) { c.QueuedNodeDemand = 4 })}},
			now:  at(0),
			want: []autoscaler.Decision{scaleUp("cpu", 2, 0, "scale 0→2: 4 nodes needed by queued jobs, capped at max_instances 2")},
		},
		{
			name: "scale 2→4 with 2 provisioning",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 4
				c.Nodes = []autoscaler.Node{preparing("n-1", at(0)), preparing("n-2", at(0))}
				c.QueuedNodeDemand = 4
			})}},
			now:  at(5 * sec),
			want: []autoscaler.Decision{scaleUp("cpu", 2, 2, "scale 2→4: 4 nodes needed by queued jobs, 2 provisioning")},
		},
		{
			name: "running nodes add to demand",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 4
				c.Nodes = []autoscaler.Node{node("n-1", autoscaler.NodeRunning), idle("n-2", at(0))}
				c.QueuedNodeDemand = 2
			})}},
			now:  at(5 * sec),
			want: []autoscaler.Decision{scaleUp("cpu", 1, 2, "scale 2→3: 2 nodes needed by queued jobs, 1 running, 1 idle")},
		},
		{
			name: "min_instances provisions without demand",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) { c.MinInstances = 1 })}},
			now:  at(0),
			want: []autoscaler.Decision{scaleUp("cpu", 1, 0, "scale 0→1: min_instances 1")},
		},
		// (3) At max: the jobs wait.
		{
			name: "at max, jobs queue",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.Nodes = []autoscaler.Node{node("n-1", autoscaler.NodeRunning), node("n-2", autoscaler.NodeRunning)}
				c.QueuedNodeDemand = 3
			})}},
			now: at(0),
		},
		// (4) Nodes being provisioned cover demand.
		{
			name: "2 queued, 2 preparing",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 4
				c.Nodes = []autoscaler.Node{preparing("n-1", at(0)), preparing("n-2", at(0))}
				c.QueuedNodeDemand = 2
			})}},
			now: at(30 * sec),
		},
		// (5) The idle timer.
		{
			name: "idle 119 s kept",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", nodes(idle("n-1", at(0))))}},
			now:  at(119 * sec),
		},
		{
			name: "idle 120 s released",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", nodes(idle("n-1", at(0))))}},
			now:  at(120 * sec),
			want: []autoscaler.Decision{release("cpu", "n-1", 1, "node n-1 idle 120 s ≥ 120 s: released")},
		},
		{
			name: "oldest idle released first, fresh idle kept, running untouched",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 4
				c.Nodes = []autoscaler.Node{idle("n-1", at(10*sec)), idle("n-2", at(0)), idle("n-3", at(100*sec)), node("n-4", autoscaler.NodeRunning)}
			})}},
			now: at(130 * sec),
			want: []autoscaler.Decision{
				release("cpu", "n-2", 4, "node n-2 idle 130 s ≥ 120 s: released"),
				release("cpu", "n-1", 3, "node n-1 idle 120 s ≥ 120 s: released"),
			},
		},
		{
			name: "fractional seconds",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.IdleTimeBeforeScaleDown = 1500 * time.Millisecond
				c.Nodes = []autoscaler.Node{idle("n-1", at(0))}
			})}},
			now:  at(2250 * time.Millisecond),
			want: []autoscaler.Decision{release("cpu", "n-1", 1, "node n-1 idle 2.25 s ≥ 1.5 s: released")},
		},
		{
			name: "idle node without IdleSince counts from CreatedOn",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", nodes(autoscaler.Node{ID: "n-1", State: autoscaler.NodeIdle, CreatedOn: at(0)}))}},
			now:  at(200 * sec),
			want: []autoscaler.Decision{release("cpu", "n-1", 1, "node n-1 idle 200 s ≥ 120 s: released")},
		},
		{
			name: "idle node with no time at all is never released on a guess",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", nodes(autoscaler.Node{ID: "n-1", State: autoscaler.NodeIdle}))}},
			now:  at(200 * sec),
		},
		{
			name: "draining node is neither live nor released again",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				n := idle("n-1", at(0))
				n.Draining = true
				c.Nodes = []autoscaler.Node{n}
				c.QueuedNodeDemand = 1
			})}},
			now:  at(500 * sec),
			want: []autoscaler.Decision{scaleUp("cpu", 1, 0, "scale 0→1: 1 node needed by queued jobs")},
		},
		// (6) min_instances keeps a node forever and says so.
		{
			name: "min_instances 1 keeps the last idle node",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MinInstances = 1
				c.Nodes = []autoscaler.Node{idle("n-2", at(0))}
			})}},
			now:  at(300 * sec),
			want: []autoscaler.Decision{kept("cpu", "n-2", 1, "node n-2 idle 300 s ≥ 120 s but kept: min_instances 1")},
		},
		{
			name: "min_instances 1 keeps the last idle node a day later",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MinInstances = 1
				c.Nodes = []autoscaler.Node{idle("n-2", at(0))}
			})}},
			now:  at(24 * time.Hour),
			want: []autoscaler.Decision{kept("cpu", "n-2", 1, "node n-2 idle 86400 s ≥ 120 s but kept: min_instances 1")},
		},
		{
			name: "min_instances 1: oldest released, newer kept",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MinInstances = 1
				c.Nodes = []autoscaler.Node{idle("n-2", at(60*sec)), idle("n-1", at(0))}
			})}},
			now: at(300 * sec),
			want: []autoscaler.Decision{
				release("cpu", "n-1", 2, "node n-1 idle 300 s ≥ 120 s: released"),
				kept("cpu", "n-2", 1, "node n-2 idle 240 s ≥ 120 s but kept: min_instances 1"),
			},
		},
		{
			name: "min_instances: nothing said before the idle time passes",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MinInstances = 1
				c.Nodes = []autoscaler.Node{idle("n-2", at(0))}
			})}},
			now: at(60 * sec),
		},
		{
			name: "min_instances counts running nodes",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MinInstances = 1
				c.Nodes = []autoscaler.Node{node("n-1", autoscaler.NodeRunning), idle("n-2", at(0))}
			})}},
			now:  at(300 * sec),
			want: []autoscaler.Decision{release("cpu", "n-2", 2, "node n-2 idle 300 s ≥ 120 s: released")},
		},
		// (7) Quota.
		{
			name: "dedicated family limit: 1 added, rest blocked",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{
					cluster("other", func(c *autoscaler.Cluster) {
						c.MaxInstances = 4
						c.Nodes = []autoscaler.Node{node("o-1", autoscaler.NodeRunning), node("o-2", autoscaler.NodeRunning), node("o-3", autoscaler.NodeRunning)}
					}),
					cluster("cpu", func(c *autoscaler.Cluster) { c.MaxInstances = 4; c.QueuedNodeDemand = 2 }),
				},
				Quotas: quota(16, 200, 100),
			},
			now: at(0),
			want: []autoscaler.Decision{
				scaleUp("cpu", 1, 0, "scale 0→1: 2 nodes needed by queued jobs, quota allows 1 of 2"),
				blocked("cpu", 1, 1, "blocked: dedicated quota standardDSv2Family 16/16 vCPUs in local"),
			},
		},
		{
			name: "family limit fully used: only blocked",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{
					cluster("cpu", func(c *autoscaler.Cluster) { c.QueuedNodeDemand = 1 }),
					cluster("other", func(c *autoscaler.Cluster) {
						d := node("o-2", autoscaler.NodeIdle)
						d.Draining = true
						c.Nodes = []autoscaler.Node{node("o-1", autoscaler.NodeRunning), d, node("o-3", autoscaler.NodeLeaving)}
					}),
				},
				Quotas: quota(12, 200, 100),
			},
			now:  at(0),
			want: []autoscaler.Decision{blocked("cpu", 1, 0, "blocked: dedicated quota standardDSv2Family 12/12 vCPUs in local")},
		},
		{
			name: "family names compare case-insensitively",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{
					cluster("cpu", func(c *autoscaler.Cluster) { c.Family = "StandardDSv2Family"; c.QueuedNodeDemand = 1 }),
					cluster("other", nodes(node("o-1", autoscaler.NodeRunning))),
				},
				Quotas: quota(4, 200, 100),
			},
			now:  at(0),
			want: []autoscaler.Decision{blocked("cpu", 1, 0, "blocked: dedicated quota StandardDSv2Family 4/4 vCPUs in local")},
		},
		{
			name: "a workspace's own family limit binds before the location's",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{
					cluster("cpu", func(c *autoscaler.Cluster) { c.Workspace = "Vision"; c.MaxInstances = 4; c.QueuedNodeDemand = 3 }),
					// Another workspace's nodes count against the location, not against Vision.
					cluster("other", func(c *autoscaler.Cluster) {
						c.Workspace = "nlp"
						c.Nodes = []autoscaler.Node{node("o-1", autoscaler.NodeRunning)}
					}),
				},
				Quotas: quota(100, 200, 100),
				// An instance of Vision holds 4 vCPUs of the family.
				Reserved:        []autoscaler.Reservation{{Location: "local", Workspace: "vision", Family: family, VCPUs: 4}},
				WorkspaceQuotas: map[string]map[string]int{"vision": {strings.ToLower(family): 12}},
			},
			now: at(0),
			want: []autoscaler.Decision{
				scaleUp("cpu", 2, 0, "scale 0→2: 3 nodes needed by queued jobs, quota allows 2 of 3"),
				blocked("cpu", 1, 2, "blocked: workspace Vision quota standardDSv2Family 12/12 vCPUs"),
			},
		},
		{
			name: "total dedicated limit spans families",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{
					cluster("cpu", func(c *autoscaler.Cluster) { c.MaxInstances = 4; c.QueuedNodeDemand = 3 }),
					cluster("gpu", func(c *autoscaler.Cluster) {
						c.Family = "standardNCSv3Family"
						c.VCPUsPerNode = 6
						c.Nodes = []autoscaler.Node{node("g-1", autoscaler.NodeRunning)}
					}),
				},
				Quotas: quota(100, 14, 100),
			},
			now: at(0),
			want: []autoscaler.Decision{
				scaleUp("cpu", 2, 0, "scale 0→2: 3 nodes needed by queued jobs, quota allows 2 of 3"),
				blocked("cpu", 1, 2, "blocked: total dedicated quota 14/14 vCPUs in local"),
			},
		},
		{
			name: "low-priority limit is separate from dedicated",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{
					cluster("dedicated", func(c *autoscaler.Cluster) {
						c.MaxInstances = 4
						c.Nodes = []autoscaler.Node{node("d-1", autoscaler.NodeRunning), node("d-2", autoscaler.NodeRunning)}
						c.QueuedNodeDemand = 1
					}),
					cluster("spot", func(c *autoscaler.Cluster) {
						c.LowPriority = true
						c.MaxInstances = 4
						c.Nodes = []autoscaler.Node{node("s-1", autoscaler.NodeLeaving)}
						c.QueuedNodeDemand = 3
					}),
				},
				Quotas: quota(8, 200, 12),
			},
			now: at(0),
			want: []autoscaler.Decision{
				blocked("dedicated", 1, 2, "blocked: dedicated quota standardDSv2Family 8/8 vCPUs in local"),
				scaleUp("spot", 2, 0, "scale 0→2: 3 nodes needed by queued jobs, quota allows 2 of 3"),
				blocked("spot", 1, 2, "blocked: low-priority quota 12/12 vCPUs in local"),
			},
		},
		{
			name: "unlimited quota",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{cluster("big", func(c *autoscaler.Cluster) {
					c.MaxInstances = 100
					c.VCPUsPerNode = 64
					c.QueuedNodeDemand = 40
				})},
				Quotas: quota(-1, -1, 0),
			},
			now:  at(0),
			want: []autoscaler.Decision{scaleUp("big", 40, 0, "scale 0→40: 40 nodes needed by queued jobs")},
		},
		{
			name: "quota is shared by the clusters of one pass, in key order",
			snap: autoscaler.Snapshot{
				Clusters: []autoscaler.Cluster{
					cluster("b", func(c *autoscaler.Cluster) { c.MaxInstances = 4; c.QueuedNodeDemand = 3 }),
					cluster("a", func(c *autoscaler.Cluster) { c.MaxInstances = 4; c.QueuedNodeDemand = 2 }),
					cluster("elsewhere", func(c *autoscaler.Cluster) { c.Location = "east"; c.QueuedNodeDemand = 2 }),
				},
				Quotas: quota(16, 200, 100),
			},
			now: at(0),
			want: []autoscaler.Decision{
				scaleUp("a", 2, 0, "scale 0→2: 2 nodes needed by queued jobs"),
				scaleUp("b", 2, 0, "scale 0→2: 3 nodes needed by queued jobs, quota allows 2 of 3"),
				blocked("b", 1, 2, "blocked: dedicated quota standardDSv2Family 16/16 vCPUs in local"),
				// "east" has no configured quota: the built-in defaults apply.
				scaleUp("elsewhere", 2, 0, "scale 0→2: 2 nodes needed by queued jobs"),
			},
		},
		// (8) max_instances lowered.
		{
			name: "max lowered 4→2 with 3 idle and 1 running",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 2
				c.Nodes = []autoscaler.Node{idle("n-1", at(10*sec)), idle("n-2", at(0)), idle("n-3", at(20*sec)), node("n-4", autoscaler.NodeRunning)}
			})}},
			now: at(30 * sec),
			want: []autoscaler.Decision{
				release("cpu", "n-2", 4, "release n-2: max_instances lowered to 2"),
				release("cpu", "n-1", 3, "release n-1: max_instances lowered to 2"),
			},
		},
		{
			name: "max lowered: running nodes finish their job",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 1
				c.QueuedNodeDemand = 2
				c.Nodes = []autoscaler.Node{node("n-1", autoscaler.NodeRunning), node("n-2", autoscaler.NodeRunning), node("n-3", autoscaler.NodeRunning)}
			})}},
			now: at(30 * sec),
		},
		{
			name: "max lowered: idle first, then the newest preparing",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 1
				c.QueuedNodeDemand = 5
				c.Nodes = []autoscaler.Node{preparing("n-1", at(0)), preparing("n-2", at(5*sec)), idle("n-3", at(0))}
			})}},
			now: at(10 * sec),
			want: []autoscaler.Decision{
				release("cpu", "n-3", 3, "release n-3: max_instances lowered to 1"),
				release("cpu", "n-2", 2, "release n-2: max_instances lowered to 1"),
			},
		},
		{
			name: "max lowered: the remaining idle node still times out",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MaxInstances = 1
				c.Nodes = []autoscaler.Node{idle("n-1", at(0)), idle("n-2", at(0))}
			})}},
			now: at(200 * sec),
			want: []autoscaler.Decision{
				release("cpu", "n-1", 2, "release n-1: max_instances lowered to 1"),
				release("cpu", "n-2", 1, "node n-2 idle 200 s ≥ 120 s: released"),
			},
		},
		// (9) Deleting.
		{
			name: "deleting releases idle and preparing, running finish, no scale-up",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.MinInstances = 2
				c.MaxInstances = 4
				c.Deleting = true
				c.QueuedNodeDemand = 2
				c.Nodes = []autoscaler.Node{
					node("n-4", autoscaler.NodeLeaving), node("n-3", autoscaler.NodeRunning),
					preparing("n-2", at(0)), idle("n-1", at(10*sec)),
				}
			})}},
			now: at(20 * sec),
			want: []autoscaler.Decision{
				release("cpu", "n-1", 3, "release n-1: compute cpu is being deleted"),
				release("cpu", "n-2", 2, "release n-2: compute cpu is being deleted"),
			},
		},
		{
			name: "deleting with only running nodes waits",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("cpu", func(c *autoscaler.Cluster) {
				c.Deleting = true
				c.Nodes = []autoscaler.Node{node("n-1", autoscaler.NodeRunning)}
			})}},
			now: at(20 * sec),
		},
		// (10) Preempted and unusable nodes are replaced while demand remains.
		{
			name: "preempted node replaced",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{cluster("spot", func(c *autoscaler.Cluster) {
				c.LowPriority = true
				c.Nodes = []autoscaler.Node{node("n-1", autoscaler.NodeRunning), node("n-2", autoscaler.NodePreempted)}
				c.QueuedNodeDemand = 1
			})}},
			now:  at(0),
			want: []autoscaler.Decision{scaleUp("spot", 1, 1, "scale 1→2: 1 node needed by queued jobs, 1 running")},
		},
		{
			name: "unusable node replaced, preempted without demand not",
			snap: autoscaler.Snapshot{Clusters: []autoscaler.Cluster{
				cluster("cpu", func(c *autoscaler.Cluster) {
					c.Nodes = []autoscaler.Node{node("n-1", autoscaler.NodeUnusable)}
					c.QueuedNodeDemand = 1
				}),
				cluster("spot", func(c *autoscaler.Cluster) {
					c.LowPriority = true
					c.Nodes = []autoscaler.Node{node("s-1", autoscaler.NodePreempted)}
				}),
			}},
			now:  at(0),
			want: []autoscaler.Decision{scaleUp("cpu", 1, 0, "scale 0→1: 1 node needed by queued jobs")},
		},
		{
			name: "empty snapshot",
			now:  at(0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withoutCodes(t, autoscaler.Plan(tt.snap, tt.now))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Plan:\n got %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

// withoutCodes checks that every decision carries a code and returns them
// without it, for the tables that spell out sentences (TestPlanCodes checks
// the codes).
func withoutCodes(t *testing.T, ds []autoscaler.Decision) []autoscaler.Decision {
	t.Helper()
	var out []autoscaler.Decision
	for _, d := range ds {
		if d.Code == "" {
			t.Errorf("decision without a code: %+v", d)
		}
		d.Code = ""
		out = append(out, d)
	}
	return out
}

func show(ds []autoscaler.Decision) string {
	if len(ds) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\n  %s %s count=%d nodes=%v %d→%d %q", d.Cluster, d.Action, d.Count, d.NodeIDs, d.From, d.To, d.Reason)
	}
	return b.String()
}

// (11) Determinism: the order of clusters in the snapshot does not matter,
// repeated runs agree, and the snapshot is left as it was.
func TestPlanDeterministic(t *testing.T) {
	mk := func() autoscaler.Snapshot {
		return autoscaler.Snapshot{
			Clusters: []autoscaler.Cluster{
				cluster("a", func(c *autoscaler.Cluster) { c.MaxInstances = 4; c.QueuedNodeDemand = 3 }),
				cluster("b", func(c *autoscaler.Cluster) {
					c.MaxInstances = 4
					c.QueuedNodeDemand = 3
					c.Nodes = []autoscaler.Node{idle("b-2", at(0)), idle("b-1", at(0))}
				}),
				cluster("c", func(c *autoscaler.Cluster) {
					c.MinInstances = 1
					c.Nodes = []autoscaler.Node{idle("c-3", at(0)), idle("c-1", at(0)), idle("c-2", at(0))}
				}),
				cluster("d", func(c *autoscaler.Cluster) { c.LowPriority = true; c.QueuedNodeDemand = 5 }),
				cluster("e", func(c *autoscaler.Cluster) {
					c.MaxInstances = 1
					c.Nodes = []autoscaler.Node{preparing("e-1", at(0)), preparing("e-2", at(0))}
				}),
			},
			Quotas: quota(20, 200, 4),
		}
	}
	now := at(500 * sec)
	want := autoscaler.Plan(mk(), now)
	if len(want) == 0 {
		t.Fatal("fixture plans nothing")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		s := mk()
		rng.Shuffle(len(s.Clusters), func(a, b int) { s.Clusters[a], s.Clusters[b] = s.Clusters[b], s.Clusters[a] })
		before := mk()
		before.Clusters = slices.Clone(s.Clusters)
		got := autoscaler.Plan(s, now)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d differs:\n got %s\nwant %s", i, show(got), show(want))
		}
		if !reflect.DeepEqual(s, before) {
			t.Fatalf("run %d: Plan modified its snapshot", i)
		}
	}
}

// world is the simulated state behind the fake Source and Actuator: the
// test moves nodes through their states between passes, as the scheduler
// and the provider would.
type world struct {
	cluster autoscaler.Cluster
	nextID  int
}

func (w *world) node(id string) *autoscaler.Node {
	for i := range w.cluster.Nodes {
		if w.cluster.Nodes[i].ID == id {
			return &w.cluster.Nodes[i]
		}
	}
	return nil
}

type fakeSource struct {
	clusters func() []autoscaler.Cluster
	err      error
	asked    []time.Time // the now of each Snapshot call
}

func (s *fakeSource) Snapshot(_ context.Context, now time.Time) (autoscaler.Snapshot, error) {
	s.asked = append(s.asked, now)
	if s.err != nil {
		return autoscaler.Snapshot{}, s.err
	}
	cs := s.clusters()
	for i := range cs {
		cs[i].Nodes = slices.Clone(cs[i].Nodes) // a snapshot, not a view
	}
	return autoscaler.Snapshot{Clusters: cs}, nil
}

type call struct {
	method string
	d      autoscaler.Decision
}

type fakeActuator struct {
	calls   []call
	fail    map[string]error // by cluster key
	onScale func(d autoscaler.Decision)
	onFree  func(d autoscaler.Decision)
}

func (a *fakeActuator) do(method string, d autoscaler.Decision, then func(autoscaler.Decision)) error {
	d.Code = "" // the scenarios spell out sentences; TestPlanCodes checks codes
	a.calls = append(a.calls, call{method, d})
	if err := a.fail[d.Cluster]; err != nil {
		return err
	}
	if then != nil {
		then(d)
	}
	return nil
}

func (a *fakeActuator) ScaleUp(_ context.Context, d autoscaler.Decision) error {
	return a.do("ScaleUp", d, a.onScale)
}

func (a *fakeActuator) Release(_ context.Context, d autoscaler.Decision) error {
	return a.do("Release", d, a.onFree)
}

func (a *fakeActuator) Record(_ context.Context, d autoscaler.Decision) error {
	return a.do("Record", d, nil)
}

// TestRunOnceScenario steps a fake clock through the flowchart: 4 jobs on a
// max-2 cluster scale it 0→2, the nodes run the jobs two by two, go idle at
// t0+60s, and are released once idle 120 s.
func TestRunOnceScenario(t *testing.T) {
	w := &world{cluster: cluster("cpu", nil)}
	var now time.Time
	act := &fakeActuator{
		onScale: func(d autoscaler.Decision) {
			for range d.Count {
				w.nextID++
				w.cluster.Nodes = append(w.cluster.Nodes, preparing(fmt.Sprintf("n-%d", w.nextID), now))
			}
		},
		onFree: func(d autoscaler.Decision) {
			for _, id := range d.NodeIDs {
				n := w.node(id)
				n.State, n.Draining, n.IdleSince = autoscaler.NodeLeaving, true, time.Time{}
			}
		},
	}
	src := &fakeSource{clusters: func() []autoscaler.Cluster { return []autoscaler.Cluster{w.cluster} }}
	as := &autoscaler.Autoscaler{Source: src, Actuator: act}

	setAll := func(st autoscaler.NodeState, idleSince time.Time) {
		for i := range w.cluster.Nodes {
			w.cluster.Nodes[i].State, w.cluster.Nodes[i].IdleSince = st, idleSince
		}
	}
	steps := []struct {
		at     time.Duration
		before func() // what happened since the last pass
		want   []call
	}{
		{at: 0, before: func() { w.cluster.QueuedNodeDemand = 4 }, want: []call{
			{"ScaleUp", scaleUp("cpu", 2, 0, "scale 0→2: 4 nodes needed by queued jobs, capped at max_instances 2")},
		}},
		{at: 5 * sec}, // still provisioning: nothing more
		{at: 10 * sec, before: func() { setAll(autoscaler.NodeRunning, time.Time{}); w.cluster.QueuedNodeDemand = 2 }},
		{at: 35 * sec, before: func() { w.cluster.QueuedNodeDemand = 0 }}, // first two done, last two placed
		{at: 60 * sec, before: func() { setAll(autoscaler.NodeIdle, at(60*sec)) }},
		{at: 179 * sec},
		{at: 180 * sec, want: []call{
			{"Release", release("cpu", "n-1", 2, "node n-1 idle 120 s ≥ 120 s: released")},
			{"Release", release("cpu", "n-2", 1, "node n-2 idle 120 s ≥ 120 s: released")},
		}},
		{at: 181 * sec}, // leaving: not released twice
		{at: 200 * sec, before: func() { w.cluster.Nodes = nil }},
	}
	for _, st := range steps {
		now = at(st.at)
		if st.before != nil {
			st.before()
		}
		act.calls = nil
		ds, err := as.RunOnce(context.Background(), now)
		if err != nil {
			t.Fatalf("t0+%v: %v", st.at, err)
		}
		if !reflect.DeepEqual(act.calls, st.want) {
			t.Fatalf("t0+%v: calls %+v, want %+v", st.at, act.calls, st.want)
		}
		if len(ds) != len(st.want) {
			t.Fatalf("t0+%v: returned %s", st.at, show(ds))
		}
		if last := src.asked[len(src.asked)-1]; !last.Equal(now) {
			t.Fatalf("t0+%v: the source was asked for its snapshot at %v, not at the pass's now", st.at, last)
		}
	}
}

func TestRunOnceRecordsBlockedAndNone(t *testing.T) {
	clusters := []autoscaler.Cluster{
		cluster("a", func(c *autoscaler.Cluster) { c.MinInstances = 1; c.Nodes = []autoscaler.Node{idle("a-1", at(0))} }),
	}
	act := &fakeActuator{}
	as := &autoscaler.Autoscaler{Source: &fakeSource{clusters: func() []autoscaler.Cluster { return clusters }}, Actuator: act}
	if _, err := as.RunOnce(context.Background(), at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if len(act.calls) != 1 || act.calls[0].method != "Record" || act.calls[0].d.Action != autoscaler.ActionNone {
		t.Fatalf("calls %+v", act.calls)
	}
}

func TestRunOnceErrors(t *testing.T) {
	errBoom := errors.New("boom")
	clusters := func() []autoscaler.Cluster {
		return []autoscaler.Cluster{
			cluster("a", func(c *autoscaler.Cluster) { c.QueuedNodeDemand = 1 }),
			cluster("b", func(c *autoscaler.Cluster) { c.Nodes = []autoscaler.Node{idle("b-1", at(0)), idle("b-2", at(0))} }),
			cluster("c", func(c *autoscaler.Cluster) { c.QueuedNodeDemand = 1 }),
		}
	}

	t.Run("one cluster failing does not stop the others", func(t *testing.T) {
		act := &fakeActuator{fail: map[string]error{"ws/b": errBoom}}
		as := &autoscaler.Autoscaler{Source: &fakeSource{clusters: clusters}, Actuator: act}
		ds, err := as.RunOnce(context.Background(), at(time.Hour))
		if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), "ws/b") {
			t.Fatalf("err = %v", err)
		}
		if len(ds) != 4 || len(act.calls) != 4 {
			t.Fatalf("decisions %s, calls %+v", show(ds), act.calls)
		}
		if got := act.calls[3]; got.method != "ScaleUp" || got.d.Cluster != "ws/c" {
			t.Fatalf("last call %+v", got)
		}
	})
	t.Run("snapshot error", func(t *testing.T) {
		act := &fakeActuator{}
		as := &autoscaler.Autoscaler{Source: &fakeSource{err: errBoom}, Actuator: act}
		if _, err := as.RunOnce(context.Background(), t0); !errors.Is(err, errBoom) || len(act.calls) != 0 {
			t.Fatalf("err = %v, calls %+v", err, act.calls)
		}
	})
	t.Run("cancelled context applies nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		act := &fakeActuator{}
		as := &autoscaler.Autoscaler{Source: &fakeSource{clusters: clusters}, Actuator: act}
		if _, err := as.RunOnce(ctx, at(time.Hour)); !errors.Is(err, context.Canceled) || len(act.calls) != 0 {
			t.Fatalf("err = %v, calls %+v", err, act.calls)
		}
	})
	t.Run("missing source or actuator", func(t *testing.T) {
		if _, err := (&autoscaler.Autoscaler{}).RunOnce(context.Background(), t0); err == nil {
			t.Fatal("no error")
		}
	})
}

// Nodes joined by hand are capacity the autoscaler never releases: past
// the idle time, above max_instances, or while they wait to join.
func TestStaticNodesAreNeverReleased(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c := autoscaler.Cluster{
		Key: "ws/own", Name: "own", MinInstances: 0, MaxInstances: 1, IdleTimeBeforeScaleDown: time.Minute,
		Location: "local", Family: "f", VCPUsPerNode: 0,
		Nodes: []autoscaler.Node{
			{ID: "h1", State: autoscaler.NodeIdle, IdleSince: now.Add(-time.Hour), Static: true},
			{ID: "h2", State: autoscaler.NodeIdle, IdleSince: now.Add(-time.Hour), Static: true},
			{ID: "h3", State: autoscaler.NodePreparing, CreatedOn: now.Add(-time.Hour), Static: true},
		},
	}
	for _, d := range autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{c}}, now) {
		if d.Action == autoscaler.ActionRelease {
			t.Fatalf("released a node joined by hand: %+v", d)
		}
	}
	// Idle static nodes cover queued demand: nothing is provisioned.
	c.QueuedNodeDemand = 2
	for _, d := range autoscaler.Plan(autoscaler.Snapshot{Clusters: []autoscaler.Cluster{c}}, now) {
		if d.Action == autoscaler.ActionScaleUp {
			t.Fatalf("scaled up although static nodes are idle: %+v", d)
		}
	}
}
