package nodes_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// watcher is a provider that reports a scripted status per node.
type watcher struct {
	mu    sync.Mutex
	st    map[string]node.ProviderNodeStatus
	calls int
}

func (w *watcher) Name() string { return "watcher" }
func (w *watcher) Provision(context.Context, node.ProvisionRequest) (string, error) {
	return "ref", nil
}
func (w *watcher) Release(context.Context, *node.Node) error       { return nil }
func (w *watcher) Alive(context.Context, *node.Node) (bool, error) { return true, nil }
func (w *watcher) NodeStatus(_ context.Context, n *node.Node) (node.ProviderNodeStatus, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	return w.st[n.ID], nil
}

// A preparing node of a watching provider takes its provider's reason
// (Kubernetes' scheduler message) as its state reason; one whose machine
// was taken back is preempted, one whose machine ended is lost; the
// provider is asked at most once per node every two seconds.
func TestPreparingNodesTakeTheirProvidersWord(t *testing.T) {
	ctx := context.Background()
	ids := []string{"pending", "evicted", "failed", "joined"}
	db, clock := seedCluster(t, "k8s", len(ids), func(i int) *node.Node {
		state := node.NodePreparing
		if ids[i] == "joined" {
			state = node.NodeIdle
		}
		return &node.Node{ID: ids[i], State: state, ProviderRef: "pod-" + ids[i]}
	})
	cat := catalogAt(t, "k8s", "watcher")
	w := &watcher{st: map[string]node.ProviderNodeStatus{
		"pending": {Waiting: "pod shoal-pending Pending: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."},
		"evicted": {Preempted: true, Reason: "EvictionByEvictionAPI"},
		"failed":  {Ended: true, Reason: "its pod Failed: OOMKilled"},
		"joined":  {Waiting: "never read"},
	}}
	svc := service.New(service.Config{Store: db, Catalog: cat, Providers: map[string]node.Provider{"k8s": w},
		NodeLeaseTTL: time.Hour, NodeLeaseGrace: time.Hour, JoinTimeout: time.Hour})
	loop := nodes.New(svc, svc.Config())
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	loop.Wait()
	want := map[string]struct{ state, reason string }{
		"pending": {node.NodePreparing, "pod shoal-pending Pending: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu."},
		"evicted": {node.NodePreempted, "taken back by its provider: EvictionByEvictionAPI"},
		"failed":  {node.NodeUnusable, "node failed ended before its agent joined: its pod Failed: OOMKilled"},
		"joined":  {node.NodeIdle, ""},
	}
	err := db.View(ctx, func(tx store.Tx) error {
		for id, wn := range want {
			n, err := tx.GetNode(id)
			if core.ErrorCode(err) == core.ENOTFOUND && wn.state != node.NodePreparing && wn.state != node.NodeIdle {
				continue // released already: gone with its reason recorded in events
			}
			if err != nil {
				return err
			}
			if n.State != wn.state || n.StateReason != wn.reason {
				t.Errorf("node %s: %s %q, want %s %q", id, n.State, n.StateReason, wn.state, wn.reason)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := w.calls
	if calls != 3 {
		t.Errorf("the provider was asked %d times, want 3 (preparing nodes only)", calls)
	}
	clock.Advance(time.Second)
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if w.calls != calls {
		t.Errorf("asked again within 2 s: %d calls", w.calls)
	}
}
