package control_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// benchController is bench/scale.sh's state without its agents: cluster
// "fleet" with nodes idle nodes, cluster "backlog" (one node's room) with
// backlog queued jobs, and an elastic cluster "elastic" with one queued
// job, the services over them and the controller, its view read once.
func benchController(b *testing.B, nodes, backlog int) (*control.Controller, store.Store, func() time.Time) {
	b.Helper()
	db, clock := teststore.Open(b)
	one, lots := 1, nodes
	err := db.Update(context.Background(), func(tx store.Tx) error {
		for _, c := range []struct {
			name string
			max  *int
		}{{"fleet", &lots}, {"backlog", &one}, {"elastic", &one}} {
			cl := teststore.Cluster(tx, c.name)
			cl.MaxInstances = c.max
			if err := tx.InsertCompute(cl); err != nil {
				return err
			}
		}
		for i := range nodes {
			nd := &node.Node{ID: fmt.Sprintf("fleet-%05d", i), State: node.NodeIdle, Size: "Standard_DS3_v2", VCPUs: 4,
				Workspace: "ws", Compute: "fleet", Location: "local", CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}
			idle := tx.Now()
			nd.IdleSince = &idle
			if err := tx.InsertNode(nd); err != nil {
				return err
			}
		}
		for i := range backlog + 1 {
			compute := "backlog"
			if i == backlog {
				compute = "elastic"
			}
			if err := tx.InsertJob(teststore.QueuedJob(tx, fmt.Sprintf("job-%06d", i), compute, int64(i+1))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat, Files: teststore.Files(b), NodeLeaseTTL: 10 * time.Second})
	c := control.New(svc, 1)
	if err := c.RunPlacement(context.Background(), clock.Now()); err != nil {
		b.Fatal(err)
	}
	return c, db, clock.Now
}

// touchNode writes one fleet node, as an agent's report does between a
// server's passes: the pass's view then reads what changed since.
func touchNode(b *testing.B, db store.Store, i int) {
	err := db.Update(context.Background(), func(tx store.Tx) error {
		n, err := tx.GetNode(fmt.Sprintf("fleet-%05d", i%10_000))
		if err != nil {
			return err
		}
		return tx.UpdateNode(n)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSubmittedPassAt10kNodes is the pass a new job's decision
// waits for (RunPlacementFor over its compute's queue) with 10,000 idle
// nodes in another cluster, one of them written since the last pass, and
// a backlog of 10,000 queued jobs: what bench/scale.sh's decisions
// measure, without its agents and HTTP.
//
//	go test ./control -run '^$' -bench SubmittedPass -benchtime 20x
func BenchmarkSubmittedPassAt10kNodes(b *testing.B) {
	c, db, now := benchController(b, 10_000, 10_000)
	keys := map[string]bool{"ws/elastic": true}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		touchNode(b, db, i)
		if err := c.RunPlacementFor(ctx, now(), keys); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChangesPassAt10kNodes is the placement pass a change starts
// (the heads of every queue), in the same state, one node written since
// the last pass.
func BenchmarkChangesPassAt10kNodes(b *testing.B) {
	c, db, now := benchController(b, 10_000, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		touchNode(b, db, i)
		if err := c.RunPlacement(ctx, now()); err != nil {
			b.Fatal(err)
		}
	}
}
