package nodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/compute"
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
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertCompute(teststore.Cluster(tx, "cpu")); err != nil {
			return err
		}
		for _, id := range []string{"old", "fresh"} {
			if err := tx.InsertNode(&node.Node{ID: id, Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := compute.NewCatalog([]*compute.Location{{Name: "local", Provider: "fake", Quota: compute.DefaultQuotaLimits()}}, compute.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, NodeLeaseTTL: 10 * time.Second, NodeLeaseGrace: 5 * time.Second})
	loop := nodes.New(svc, svc.Config())

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
	err = db.View(ctx, func(tx store.Tx) error {
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
