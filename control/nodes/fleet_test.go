package nodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest"
)

// seedCluster is a SQLite store with cluster "cpu" of workspace "ws" and
// n nodes of it at location, the i-th made by mk(i) and given that
// workspace, compute and location, created and heard now.
func seedCluster(tb testing.TB, location string, n int, mk func(i int) *node.Node) (store.Store, *storetest.Clock) {
	tb.Helper()
	db, clock := teststore.Open(tb)
	err := db.Update(context.Background(), func(tx store.Tx) error {
		if err := tx.InsertCompute(teststore.Cluster(tx, "cpu")); err != nil {
			return err
		}
		for i := range n {
			nd := mk(i)
			nd.Workspace, nd.Compute, nd.Location, nd.CreatedOn, nd.LastHeartbeat, nd.Version = "ws", "cpu", location, tx.Now(), tx.Now(), 1
			if err := tx.InsertNode(nd); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return db, clock
}

// catalogAt is a catalog of one location served by provider.
func catalogAt(tb testing.TB, location, provider string) *catalog.Catalog {
	tb.Helper()
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: location, Provider: provider, Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), location)
	if err != nil {
		tb.Fatal(err)
	}
	return cat
}

// localFleet is seedCluster at location "local" (provider "fake") with n
// Standard_DS3_v2 nodes, the i-th named nameOf(i) in state stateOf(i),
// and the services over it with a 10 s lease and 5 s of grace.
func localFleet(tb testing.TB, n int, nameOf func(i int) string, stateOf func(i int) string) (store.Store, *storetest.Clock, *service.Services) {
	tb.Helper()
	db, clock := seedCluster(tb, "local", n, func(i int) *node.Node {
		return &node.Node{ID: nameOf(i), State: stateOf(i), Size: "Standard_DS3_v2", VCPUs: 4}
	})
	return db, clock, service.New(service.Config{Store: db, Catalog: catalogAt(tb, "local", "fake"), NodeLeaseTTL: 10 * time.Second, NodeLeaseGrace: 5 * time.Second})
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
