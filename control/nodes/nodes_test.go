package nodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// The loop runs on its own over the services' store: a node whose agent
// stopped reporting past its lease and grace is lost, then released (no
// provider here: the release only removes it), and a node within its
// lease is left alone.
func TestRunOnceLosesAndReleasesANodePastItsLease(t *testing.T) {
	ctx := context.Background()
	ids := []string{"old", "fresh"}
	db, clock, svc := localFleet(t, len(ids), func(i int) string { return ids[i] }, idle)
	loop := nodes.New(svc, svc.Config())
	// The loop's first pass is where it starts hearing nodes.
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}

	// "fresh" reports just before the pass; "old" last reported 16 s ago.
	clock.Advance(16 * time.Second)
	if err := db.Update(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode("fresh")
		if err != nil {
			return err
		}
		n.LastHeartbeat = tx.Now()
		return tx.UpdateNode(n)
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first pass loses it, the next releases it
		if err := loop.RunOnce(ctx, clock.Now()); err != nil {
			t.Fatal(err)
		}
		loop.Wait()
	}
	err := db.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetNode("old"); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("the node past its lease is still there (%v)", err)
		}
		n, err := tx.GetNode("fresh")
		if err != nil {
			return err
		}
		if n.State != node.NodeIdle {
			t.Errorf("the node within its lease is %s, want idle", n.State)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A server that takes its time to start (adopting nodes, opening the
// store under load) hands its nodes their lease from when it starts
// hearing them, its loop's first pass, not from when it reset their
// leases: on main a node whose lease ran out while the server was still
// starting was declared lost for the server's own slowness
// (e2e TestAgentOutlivesAbsentServer under load).
func TestNodesGetAFullLeaseFromTheLoopsFirstPass(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertCompute(teststore.Cluster(tx, "cpu")); err != nil {
			return err
		}
		return tx.InsertNode(&node.Node{ID: "n1", Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
			CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, NodeLeaseTTL: time.Second, NodeLeaseGrace: time.Second})
	loop := nodes.New(svc, svc.Config())
	if err := loop.ResetLeases(ctx); err != nil {
		t.Fatal(err)
	}
	state := func() string { t.Helper(); return nodeState(t, db, "n1") }
	// The server starts serving 5 s after the reset: its first pass.
	clock.Advance(5 * time.Second)
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	clock.Advance(1500 * time.Millisecond)
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if st := state(); st != node.NodeIdle {
		t.Fatalf("1.5 s after the server began hearing nodes, within lease and grace, the node is %s", st)
	}
	// Silent for lease and grace after that: lost.
	clock.Advance(time.Second)
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	loop.Wait()
	if st := state(); st == node.NodeIdle {
		t.Fatal("a node silent past lease and grace from the first pass is still idle")
	}
}
