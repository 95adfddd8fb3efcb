package accounting_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/accounting"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// The loop runs on its own, over the services' store: a cluster's node
// counts are written once, again only when they change or a sample
// interval has passed, and a budget pass is due only every so often.
func TestRunOnceSamplesNodes(t *testing.T) {
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
	a := accounting.New(service.New(service.Config{Store: db}))
	samples := func(now time.Time) []*node.NodeSample {
		t.Helper()
		var out []*node.NodeSample
		if err := db.View(ctx, func(tx store.Tx) (err error) {
			out, err = tx.ListNodeSamples("ws", "cpu", now.Add(-time.Hour))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	now := clock.Now()
	for _, step := range []struct {
		after time.Duration
		want  int
	}{
		{0, 1},           // the first look writes the counts
		{time.Second, 1}, // same counts, soon after: nothing
		{node.NodeSampleInterval + time.Second, 2}, // a node billed: at least one per interval
	} {
		now = now.Add(step.after)
		if err := a.RunOnce(ctx, now); err != nil {
			t.Fatal(err)
		}
		if got := samples(now); len(got) != step.want || got[len(got)-1].Idle != 1 {
			t.Fatalf("after %s: %d samples (%+v), want %d with one idle node", step.after, len(got), got, step.want)
		}
	}
}
