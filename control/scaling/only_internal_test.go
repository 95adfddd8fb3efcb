package scaling

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/scheduling"
)

// catalogOnly is the Services a snapshot reads: the catalog alone.
type catalogOnly struct {
	Services
	cat *catalog.Catalog
}

func (c catalogOnly) Catalog() *catalog.Catalog { return c.cat }

// A pass that plans some clusters builds the same snapshot whether the
// others' nodes are copied and then counted (Snapshot.Only) or counted
// where they lie: the clusters planned, their nodes, and what every other
// cluster's nodes hold of the quotas, dedicated nodes of a low-priority
// cluster apart.
func TestSnapshotOfSomeClustersCountsTheOthers(t *testing.T) {
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "local", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	c := &Loop{s: catalogOnly{cat: cat}}
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	cluster := func(name, tier string) *compute.Compute {
		lo, hi, idle := 0, 100, 120
		return &compute.Compute{Workspace: "ws", ProvisioningState: compute.ProvisioningSucceeded, ComputeSpec: compute.ComputeSpec{
			Name: name, Type: compute.ComputeTypeCluster, Location: "local", Size: "Standard_DS3_v2",
			Tier: tier, MinInstances: &lo, MaxInstances: &hi, IdleTimeBeforeScaleDown: &idle}}
	}
	st := &scheduling.State{Clusters: map[string]*scheduling.ClusterInfo{}}
	states := []string{node.NodePreparing, node.NodeIdle, node.NodeRunning, node.NodeLeaving, node.NodeUnusable, node.NodePreempted}
	for _, cl := range []struct {
		name, tier string
		nodes      int
	}{{"fleet", compute.TierDedicated, 60}, {"spot", compute.TierLowPriority, 30}, {"new", compute.TierDedicated, 0}, {"other", compute.TierDedicated, 7}} {
		ci := &scheduling.ClusterInfo{Compute: cluster(cl.name, cl.tier)}
		for i := range cl.nodes {
			ci.Nodes = append(ci.Nodes, &node.Node{ID: fmt.Sprintf("%s-n%d", cl.name, i), Workspace: "ws", Compute: cl.name,
				State: states[i%len(states)], LowPriority: cl.tier == compute.TierLowPriority && i%4 != 0, CreatedOn: t0,
				PullingImages: map[bool][]string{true: {"img"}}[i%5 == 0]})
		}
		st.Clusters[compute.ComputeKey("ws", cl.name)] = ci
	}
	for _, only := range []map[string]bool{
		{compute.ComputeKey("ws", "new"): true},
		{compute.ComputeKey("ws", "new"): true, compute.ComputeKey("ws", "other"): true},
		{compute.ComputeKey("ws", "spot"): true},
	} {
		all, _ := c.scaleSnapshot(st, t0, nil)
		some, _ := c.scaleSnapshot(st, t0, only)
		want, got := normal(onlyOf(all, only)), normal(onlyOf(some, only))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("planning %v:\n got  %+v\n want %+v", only, got, want)
		}
		if len(want.Reserved) == 0 {
			t.Errorf("planning %v: no quota held by the others: the test proves nothing", only)
		}
	}
}

// normal sorts a snapshot's clusters and reservations, whose order follows
// a map's.
func normal(s autoscaler.Snapshot) autoscaler.Snapshot {
	s.Clusters = slices.Clone(s.Clusters)
	slices.SortFunc(s.Clusters, func(a, b autoscaler.Cluster) int { return cmp.Compare(a.Key, b.Key) })
	s.Reserved = slices.Clone(s.Reserved)
	slices.SortFunc(s.Reserved, func(a, b autoscaler.Reservation) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.VCPUs, b.VCPUs), cmp.Compare(fmt.Sprint(a.LowPriority), fmt.Sprint(b.LowPriority)))
	})
	return s
}
