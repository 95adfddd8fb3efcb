package nodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
)

// A fleet too large for the configured lease's syncs is given a longer
// one (decide/nodelease), and the loop judges a node's silence by it: 3
// nodes at 0.3 syncs a second need a 30 s lease, so a node silent for
// 25 s (past the configured 10 s + 5 s) keeps its work, and one silent
// past 30 s + 5 s is lost.
func TestRunOnceJudgesSilenceByTheFleetsLease(t *testing.T) {
	ctx := context.Background()
	db, clock := seedCluster(t, "local", 3, func(i int) *node.Node {
		return &node.Node{ID: []string{"a", "b", "c"}[i], State: node.NodeIdle, Size: "Standard_DS3_v2", VCPUs: 4}
	})
	svc := service.New(service.Config{Store: db, Catalog: catalogAt(t, "local", "fake"), Clock: clock,
		NodeLeaseTTL: 10 * time.Second, NodeLeaseGrace: 5 * time.Second, MaxHeartbeatsPerSecond: 0.3})
	if got := svc.LeaseExpiry(ctx, clock.Now()); got != 30*time.Second {
		t.Fatalf("LeaseExpiry for 3 nodes at 0.3 syncs a second = %v, want 30s", got)
	}
	loop := nodes.New(svc, svc.Config())
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(25 * time.Second)
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	loop.Wait()
	if st := nodeState(t, db, "a"); st != node.NodeIdle {
		t.Fatalf("a node silent 25 s within the fleet's 30 s lease is %s, want idle", st)
	}
	clock.Advance(11 * time.Second)
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	loop.Wait()
	if st := nodeState(t, db, "a"); st != node.NodeUnusable && st != "gone" {
		t.Fatalf("a node silent 36 s, past the fleet's lease and grace, is %s, want unusable or released", st)
	}
}
