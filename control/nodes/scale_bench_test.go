package nodes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/nodes"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
)

// benchFleet is a SQLite store with one cluster of n nodes, every one
// idle or running and just heard, and the services over it: the steady
// state of bench/scale.sh's fleet without its agents.
func benchFleet(b *testing.B, n int) (*service.Services, *nodes.Loop, func() time.Time) {
	b.Helper()
	_, clock, svc := localFleet(b, n, func(i int) string { return fmt.Sprintf("n-%05d", i) }, func(i int) string {
		if i%2 == 1 {
			return node.NodeRunning
		}
		return node.NodeIdle
	})
	return svc, nodes.New(svc, svc.Config()), clock.Now
}

// BenchmarkLifecyclePassAt10kNodes is one pass of the node lifecycle loop
// over 10,000 nodes none of which is due: what it costs a server at
// steady state on every pass (bench/scale.sh's fleet).
func BenchmarkLifecyclePassAt10kNodes(b *testing.B) {
	_, loop, now := benchFleet(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := loop.RunOnce(ctx, now()); err != nil {
			b.Fatal(err)
		}
		loop.Wait()
	}
}

// BenchmarkComputeListAt10kNodes is `shoal compute list` of a workspace
// whose one cluster has 10,000 nodes: its status counts them.
func BenchmarkComputeListAt10kNodes(b *testing.B) {
	svc, _, _ := benchFleet(b, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		list, err := svc.ListComputes(ctx, compute.ComputeFilter{Workspace: "ws"})
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != 1 || list[0].CurrentNodeCount != 10_000 || list[0].NodeStateCounts.RunningNodeCount != 5_000 {
			b.Fatalf("list %+v, want one cluster with 10,000 nodes, 5,000 running", list)
		}
	}
}
