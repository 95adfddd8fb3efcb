package nodes_test

import (
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// lostCounter is a service.Observer that counts nodes lost, as the
// metrics' shoal_nodes_lost_total does.
type lostCounter struct {
	mu   sync.Mutex
	lost map[string]int
}

func (o *lostCounter) JobStarted(string, string, time.Duration)     {}
func (o *lostCounter) JobEnded(string, string, string)              {}
func (o *lostCounter) NodeReady(string, string, time.Duration)      {}
func (o *lostCounter) ScaleDecision(string, string, string, string) {}
func (o *lostCounter) NodeLost(ws, compute string) {
	o.mu.Lock()
	o.lost[ws+"/"+compute]++
	o.mu.Unlock()
}

// A node declared lost is a core.EventNodeLost on its compute and is
// counted once, after the loss is committed, by an observer that counts
// losses; a second pass does not count it again.
func TestNodeLostIsAnEventAndCountedOnce(t *testing.T) {
	b := newNodeBench(t, func(tx store.Tx) error {
		if err := tx.InsertCompute(teststore.Cluster(tx, "cpu")); err != nil {
			return err
		}
		return tx.InsertNode(&node.Node{ID: "n1", Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
			CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1})
	})
	obs := &lostCounter{lost: map[string]int{}}
	b.svc.SetObserver(obs)
	loop := nodes.New(b.svc, b.svc.Config())
	if err := loop.RunOnce(b.ctx, b.clock.Now()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := loop.RunOnce(b.ctx, b.clock.Advance(16*time.Second)); err != nil {
			t.Fatal(err)
		}
		loop.Wait()
	}
	obs.mu.Lock()
	got := obs.lost["ws/cpu"]
	obs.mu.Unlock()
	if got != 1 {
		t.Errorf("nodes lost counted %d times, want once", got)
	}
	if n := b.events("cpu", core.EventNodeLost); n != 1 {
		t.Errorf("%d node_lost events, want one", n)
	}
}
