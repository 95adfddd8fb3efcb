package placement_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// refusingPlace is the services failing to write bad's placement.
type refusingPlace struct {
	*service.Services
	bad string
}

func (r refusingPlace) Place(ctx context.Context, tx store.Tx, ref store.QueuedJobRef, nodeIDs []string) ([]*node.Node, error) {
	if ref.Name == r.bad {
		return nil, core.Errorf(core.EUNAVAILABLE, "the store refused the write")
	}
	return r.Services.Place(ctx, tx, ref, nodeIDs)
}

// One job whose placement cannot be written does not keep the others of
// the pass queued: they are placed, the failure is recorded on that job
// (one placement_failed event per retry, not per pass) and the pass does
// not fail. (The placements were one transaction: one failure kept every
// job queued, pass after pass.)
func TestOneFailingPlacementDoesNotHoldUpOthers(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		two := 2
		c.MaxInstances = &two
		if err := tx.InsertCompute(c); err != nil {
			return err
		}
		now := tx.Now()
		for _, id := range []string{"n1", "n2"} {
			if err := tx.InsertNode(&node.Node{ID: id, Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				Size: "Standard_DS3_v2", VCPUs: 4, CreatedOn: now, LastHeartbeat: now, IdleSince: &now, Version: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := newServices(t, db)
	admin := asAdmin(ctx)
	for _, name := range []string{"bad", "good"} {
		if _, _, err := svc.SubmitJob(admin, "ws", &job.JobSpec{Name: name, Type: job.JobTypeCommand, Command: "true", Compute: "azureml:cpu"}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(1)
	}
	l := placement.New(refusingPlace{svc, "bad"}, noBlocks{}, scheduling.NewView())
	for range 3 {
		if _, err := l.RunOnce(ctx, clock.Now(), true); err != nil {
			t.Fatalf("one job's failed placement failed the pass: %v", err)
		}
	}
	var good, bad *job.Job
	if err := db.View(ctx, func(tx store.Tx) (err error) {
		if good, err = tx.GetJob("ws", "good"); err != nil {
			return err
		}
		bad, err = tx.GetJob("ws", "bad")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if good.CurrentAttemptID == "" {
		t.Fatalf("good is %s, not placed", good.Status)
	}
	if bad.Status != job.JobQueued {
		t.Fatalf("bad is %s, want still queued", bad.Status)
	}
	evs, err := svc.ListJobEvents(admin, "ws", "bad")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == placement.EventPlacementFailed {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d placement_failed events on bad after passes within its wait, want 1", n)
	}
}
