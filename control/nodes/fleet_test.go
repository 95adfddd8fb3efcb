package nodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest"
)

// localFleet is a SQLite store with cluster "cpu" of workspace "ws" at
// location "local" (provider "fake") and n nodes of it, the i-th in state
// stateOf(i) and named by nameOf(i), each created and heard now; and the
// services over it with a 10 s lease and 5 s of grace.
func localFleet(tb testing.TB, n int, nameOf func(i int) string, stateOf func(i int) string) (store.Store, *storetest.Clock, *service.Services) {
	tb.Helper()
	db, clock := teststore.Open(tb)
	err := db.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertCompute(teststore.Cluster(tx, "cpu")); err != nil {
			return err
		}
		for i := range n {
			if err := tx.InsertNode(&node.Node{ID: nameOf(i), Workspace: "ws", Compute: "cpu", Location: "local", State: stateOf(i),
				Size: "Standard_DS3_v2", VCPUs: 4, CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	cat, err := compute.NewCatalog([]*compute.Location{{Name: "local", Provider: "fake", Quota: compute.DefaultQuotaLimits()}}, compute.BuiltinSizes(), "local")
	if err != nil {
		tb.Fatal(err)
	}
	return db, clock, service.New(service.Config{Store: db, Catalog: cat, NodeLeaseTTL: 10 * time.Second, NodeLeaseGrace: 5 * time.Second})
}

// nodeState is node id's state in db, or "gone" once it was released.
func nodeState(t *testing.T, db store.Store, id string) string {
	t.Helper()
	var st string
	if err := db.View(context.Background(), func(tx store.Tx) error {
		n, err := tx.GetNode(id)
		if core.ErrorCode(err) == core.ENOTFOUND {
			st = "gone"
			return nil
		} else if err != nil {
			return err
		}
		st = n.State
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

// idle is a stateOf for localFleet: every node idle.
func idle(int) string { return node.NodeIdle }
