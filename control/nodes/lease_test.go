package nodes_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
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

// A node declared lost is said in the server's log, with its compute and
// why, beside the compute's node_lost event: before, the log said nothing,
// and a job run again or an instance made unusable by a missed lease was
// explained only in the compute's events.
func TestLostNodeIsLogged(t *testing.T) {
	ctx := context.Background()
	db, clock := seedCluster(t, "local", 1, func(i int) *node.Node {
		return &node.Node{ID: "a", State: node.NodeIdle, Size: "Standard_DS3_v2", VCPUs: 4}
	})
	var logs bytes.Buffer
	svc := service.New(service.Config{Store: db, Catalog: catalogAt(t, "local", "fake"), Clock: clock,
		NodeLeaseTTL: 10 * time.Second, NodeLeaseGrace: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	loop := nodes.New(svc, svc.Config())
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "node lost") {
		t.Fatalf("a node within its lease is logged lost:\n%s", logs.String())
	}
	clock.Advance(16 * time.Second)
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	loop.Wait()
	out := logs.String()
	if !strings.Contains(out, `level=WARN msg="node lost" node=a compute=`) || !strings.Contains(out, "missed its lease: no heartbeat for 16s") {
		t.Errorf("the server's log after a node missed its lease:\n%s", out)
	}
}
