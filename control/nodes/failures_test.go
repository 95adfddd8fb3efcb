package nodes_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest"
)

// failing is the services failing, for the compute or node bad names,
// what the node loop asks of them.
type failing struct {
	*service.Services
	bad string
}

func (f failing) FailQueuedJobs(ctx context.Context, tx store.Tx, c *compute.Compute, out *service.JobOutcomes) error {
	if c.Name == f.bad {
		return core.Errorf(core.EUNAVAILABLE, "the store refused the write")
	}
	return f.Services.FailQueuedJobs(ctx, tx, c, out)
}

func (f failing) LoseNode(ctx context.Context, tx store.Tx, n *node.Node, reason string, out *service.JobOutcomes) ([]string, error) {
	if n.ID == f.bad {
		return nil, core.Errorf(core.EUNAVAILABLE, "the store refused the write")
	}
	return f.Services.LoseNode(ctx, tx, n, reason, out)
}

// refusing is a provider whose Release refuses the nodes refuse names
// and counts what it was asked.
type refusing struct {
	*fake.Provider
	mu     sync.Mutex
	asked  map[string]int
	refuse string
}

func (r *refusing) Release(ctx context.Context, n *node.Node) error {
	r.mu.Lock()
	r.asked[n.ID]++
	r.mu.Unlock()
	if n.ID == r.refuse {
		return core.Errorf(core.EUNAVAILABLE, "the provider does not answer")
	}
	return r.Provider.Release(ctx, n)
}

func (r *refusing) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked[id]
}

type nodeBench struct {
	t     *testing.T
	ctx   context.Context
	db    store.Store
	clock *storetest.Clock
	svc   *service.Services
	prov  *refusing
}

func newNodeBench(t *testing.T, fill func(tx store.Tx) error) *nodeBench {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	if err := db.Update(ctx, fill); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	prov := &refusing{Provider: fake.New(), asked: map[string]int{}, refuse: "stuck"}
	svc := service.New(service.Config{Store: db, Catalog: cat, Clock: clock, NodeLeaseTTL: 10 * time.Second, NodeLeaseGrace: 5 * time.Second,
		Providers: map[string]node.Provider{"fake": prov}})
	return &nodeBench{t: t, ctx: ctx, db: db, clock: clock, svc: svc, prov: prov}
}

func (b *nodeBench) events(comp, kind string) int {
	n := 0
	_ = b.db.View(b.ctx, func(tx store.Tx) error {
		evs, err := tx.ListEvents(core.EventFilter{Workspace: "ws", ResourceType: core.ResourceCompute, ResourceName: comp})
		for _, e := range evs {
			if e.Kind == kind {
				n++
			}
		}
		return err
	})
	return n
}

func (b *nodeBench) exists(get func(tx store.Tx) error) bool {
	err := b.db.View(b.ctx, get)
	if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
		b.t.Fatal(err)
	}
	return err == nil
}

// One deleted cluster whose removal fails does not hold up another's:
// each compute is reconciled on its own, the failure recorded on it once
// per retry and retried after its wait. (All computes were reconciled in
// one transaction: one failure rolled back every other and failed the
// pass, every pass.)
func TestOneFailingComputeDoesNotHoldUpOthers(t *testing.T) {
	b := newNodeBench(t, func(tx store.Tx) error {
		for _, name := range []string{"bad", "good"} {
			c := teststore.Cluster(tx, name)
			c.ProvisioningState = compute.ProvisioningDeleting
			if err := tx.InsertCompute(c); err != nil {
				return err
			}
		}
		return nil
	})
	l := nodes.New(failing{b.svc, "bad"}, b.svc.Config())
	gone := func(name string) bool {
		return !b.exists(func(tx store.Tx) error { _, err := tx.GetCompute("ws", name); return err })
	}
	for range 3 {
		if err := l.ReconcileComputes(b.ctx); err != nil {
			t.Fatalf("one compute's failure failed the pass: %v", err)
		}
	}
	if !gone("good") {
		t.Fatal("the good cluster was not removed")
	}
	if gone("bad") || b.events("bad", "reconcile_failed") != 1 {
		t.Fatalf("bad: gone %v, %d failure events; want kept, one event for passes within its wait", gone("bad"), b.events("bad", "reconcile_failed"))
	}
	b.clock.Advance(loop.DefaultFirstWait)
	if err := l.ReconcileComputes(b.ctx); err != nil {
		t.Fatal(err)
	}
	if n := b.events("bad", "reconcile_failed"); n != 2 {
		t.Fatalf("%d failure events after its wait, want a second", n)
	}
}

// One node whose loss cannot be recorded does not keep the others past
// their lease from being lost and released; a node whose release the
// provider refuses is retried after a wait, not on every pass, its
// failure recorded on its compute once per retry.
func TestOneFailingNodeDoesNotHoldUpOthers(t *testing.T) {
	b := newNodeBench(t, func(tx store.Tx) error {
		if err := tx.InsertCompute(teststore.Cluster(tx, "cpu")); err != nil {
			return err
		}
		for _, id := range []string{"bad", "good", "stuck"} {
			if err := tx.InsertNode(&node.Node{ID: id, Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	l := nodes.New(failing{b.svc, "bad"}, b.svc.Config())
	// The loop hears nodes from its first pass on.
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(16 * time.Second)
	for range 3 {
		if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
			t.Fatalf("one node's failure failed the pass: %v", err)
		}
		l.Wait()
	}
	state := func(id string) string {
		var n *node.Node
		if !b.exists(func(tx store.Tx) (err error) { n, err = tx.GetNode(id); return err }) {
			return "gone"
		}
		return n.State
	}
	if s := state("good"); s != "gone" {
		t.Fatalf("good is %s, want lost and released", s)
	}
	if s := state("bad"); s != node.NodeIdle {
		t.Fatalf("bad is %s, want left as it was", s)
	}
	if n := b.events("cpu", "node_loss_failed"); n != 1 {
		t.Fatalf("%d node_loss_failed events for passes within the wait, want 1", n)
	}
	if s := state("stuck"); s != node.NodeUnusable || b.prov.count("stuck") != 1 || b.events("cpu", "node_release_failed") != 1 {
		t.Fatalf("stuck is %s, asked %d times, %d failure events; want unusable, asked once within its wait, one event",
			s, b.prov.count("stuck"), b.events("cpu", "node_release_failed"))
	}
	b.clock.Advance(loop.DefaultFirstWait)
	if err := l.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	l.Wait()
	if b.prov.count("stuck") != 2 || !strings.Contains(state("stuck"), node.NodeUnusable) {
		t.Fatalf("stuck asked %d times after its wait, want 2", b.prov.count("stuck"))
	}
}
