package placement_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/control/scaling"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// noBlocks: no cluster was refused growth.
type noBlocks struct{}

func (noBlocks) Block(string) scaling.Block { return scaling.Block{} }

// The pass runs on its own over the services' store: of two queued jobs
// and one idle node, the first is started on the node and the second
// waits, its reason stored where every replica reads it.
func TestRunOncePlacesAndKeepsReasons(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		one := 1
		c.MaxInstances = &one
		if err := tx.InsertCompute(c); err != nil {
			return err
		}
		now := tx.Now()
		return tx.InsertNode(&node.Node{ID: "n1", Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
			Size: "Standard_DS3_v2", VCPUs: 4, CreatedOn: now, LastHeartbeat: now, IdleSince: &now, Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := newServices(t, db)
	admin := asAdmin(ctx)
	for _, name := range []string{"first", "second"} {
		if _, _, err := svc.SubmitJob(admin, "ws", &job.JobSpec{Name: name, Type: job.JobTypeCommand, Command: "true", Compute: "azureml:cpu"}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(1)
	}
	st, err := placement.New(svc, noBlocks{}, scheduling.NewView()).RunOnce(ctx, clock.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Queued) != 1 || st.Queued[0].Name != "second" {
		t.Errorf("still queued after the pass: %v, want second", st.Queued)
	}
	err = db.View(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode("n1")
		if err != nil {
			return err
		}
		if n.CurrentAttemptID == "" {
			t.Error("the idle node was given no job")
		}
		j, err := tx.GetJob("ws", "first")
		if err != nil {
			return err
		}
		if j.CurrentAttemptID != n.CurrentAttemptID {
			t.Errorf("the node runs attempt %q, the first job's is %q", n.CurrentAttemptID, j.CurrentAttemptID)
		}
		r, ok, err := svc.WaitReasons().Get(tx, "ws", "second")
		if err != nil {
			return err
		}
		if !ok || r.Code() == "" {
			t.Errorf("the second job's reason: %+v %v, want one with a code", r, ok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A job queued on a compute being deleted says so, with its own code,
// instead of what it waited for before the delete ("cluster is at
// max_instances"), and is no demand for the autoscaler.
func TestRunOnceDeletingComputeReason(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		one := 1
		c.MaxInstances = &one
		return tx.InsertCompute(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := newServices(t, db)
	admin := asAdmin(ctx)
	if _, _, err := svc.SubmitJob(admin, "ws", &job.JobSpec{Name: "waits", Type: job.JobTypeCommand, Command: "true", Compute: "azureml:cpu"}); err != nil {
		t.Fatal(err)
	}
	pass := placement.New(svc, noBlocks{}, scheduling.NewView())
	reason := func() (string, string) {
		t.Helper()
		var code, msg string
		err := db.View(ctx, func(tx store.Tx) error {
			r, ok, err := svc.WaitReasons().Get(tx, "ws", "waits")
			if !ok {
				t.Fatal("the queued job has no reason")
			}
			code, msg = string(r.Code()), r.Message()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return code, msg
	}
	clock.Advance(1)
	if _, err := pass.RunOnce(ctx, clock.Now(), true); err != nil {
		t.Fatal(err)
	}
	if code, _ := reason(); code == string(scheduler.ReasonDeleting) {
		t.Fatalf("before the delete the reason is already %s", code)
	}
	err = db.Update(ctx, func(tx store.Tx) error {
		c, err := tx.GetCompute("ws", "cpu")
		if err != nil {
			return err
		}
		c.ProvisioningState = compute.ProvisioningDeleting
		c.Version++
		return tx.UpdateCompute(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(1)
	st, err := pass.RunOnce(ctx, clock.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	code, msg := reason()
	if code != string(scheduler.ReasonDeleting) || !strings.Contains(msg, "compute cpu is being deleted") {
		t.Errorf("reason on a deleting compute: %s %q, want %s naming the compute", code, msg, scheduler.ReasonDeleting)
	}
	if len(st.Queued) != 0 {
		t.Errorf("the autoscaler is handed %d queued jobs of a deleting compute as demand", len(st.Queued))
	}
}
