package scaling

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// A blocked decision's event kind, and the block the scheduler explains
// waiting jobs by, follow the decision's code, never its sentence: a
// budget block worded without "budget " is a budget block, and a quota
// block whose sentence starts with "budget " is a quota block.
func TestScaleBlockFollowsCode(t *testing.T) {
	ctx := context.Background()
	db, _ := openTestStore(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		for _, name := range []string{"a", "b"} {
			err := tx.InsertCompute(&compute.Compute{
				ComputeSpec: compute.ComputeSpec{Name: name, Type: compute.ComputeTypeCluster},
				Workspace:   "ws", Version: 1, ProvisioningState: compute.ProvisioningSucceeded,
				ProvisioningErrors: []compute.ProvisioningError{}, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db})
	c := New(svc, svc.Config(), nil)
	act := scaleActuator{c}
	decisions := []autoscaler.Decision{
		{Cluster: "ws/a", Action: autoscaler.ActionBlocked, Count: 1, Code: autoscaler.ReasonBudget, Reason: "spending limit of team ml reached"},
		{Cluster: "ws/b", Action: autoscaler.ActionBlocked, Count: 1, Code: autoscaler.ReasonQuota, Reason: "budget family quota 8/8 vCPUs"},
	}
	c.beginScalePass()
	for _, d := range decisions {
		if err := act.Record(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	c.endScalePass(true, nil)

	for _, tc := range []struct {
		compute, event string
		blockedBy      scheduler.ReasonCode
	}{
		{"a", core.EventBudgetBlocked, scheduler.ReasonBudget},
		{"b", core.EventQuotaBlocked, scheduler.ReasonQuota},
	} {
		var evs []*core.Event
		if err := db.View(ctx, func(tx store.Tx) (err error) {
			evs, err = tx.ListEvents(core.EventFilter{Workspace: "ws", ResourceType: core.ResourceCompute, ResourceName: tc.compute})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Kind != tc.event {
			t.Errorf("compute %s: events %+v, want one %s", tc.compute, evs, tc.event)
		}
		if got := c.Block("ws/" + tc.compute).BlockedBy(); got != tc.blockedBy {
			t.Errorf("compute %s: the scheduler is told the block is %q, want %q", tc.compute, got, tc.blockedBy)
		}
	}
	if got := c.Block("ws/none").BlockedBy(); got != "" {
		t.Errorf("a cluster nothing blocked: %q", got)
	}
}

// The metrics' reason label is the decision's code, whatever its sentence
// says (the text classifier it replaces called a scale-up with idle nodes
// "idle" and a release of a node named quota-1 "quota").
func TestDecisionKindFollowsCode(t *testing.T) {
	for _, tc := range []struct {
		d    autoscaler.Decision
		want string
	}{
		{autoscaler.Decision{Action: autoscaler.ActionScaleUp, Code: autoscaler.ReasonDemand, Reason: "scale 1→2: 2 nodes needed by queued jobs, 1 idle"}, "demand"},
		{autoscaler.Decision{Action: autoscaler.ActionRelease, Code: autoscaler.ReasonDeleting, Reason: "release quota-1: compute cpu is being deleted"}, "deleting"},
		{autoscaler.Decision{Action: autoscaler.ActionBlocked, Code: autoscaler.ReasonBudget, Reason: "spending limit reached"}, "budget"},
		{autoscaler.Decision{Action: autoscaler.ActionBlocked, Code: autoscaler.ReasonQuota, Reason: "budget family quota 8/8 vCPUs"}, "quota"},
		{autoscaler.Decision{Action: autoscaler.ActionBlocked, Reason: "budget x reached"}, "other"},
	} {
		if got := decisionKind(tc.d); got != tc.want {
			t.Errorf("decisionKind(%q, code %q) = %q, want %q", tc.d.Reason, tc.d.Code, got, tc.want)
		}
	}
}

// The autoscaler's source decides by the pass's now, not by a clock of its
// own: a provisioning backoff running until T holds a cluster back in a
// pass at T-1s and lets it go in a pass at T+1s, whatever the server's
// clock reads meanwhile.
func TestScaleSnapshotUsesThePassNow(t *testing.T) {
	ctx := context.Background()
	db, _ := openTestStore(t)
	one, two, idle := 1, 2, 120
	err := db.Update(ctx, func(tx store.Tx) error {
		return tx.InsertCompute(&compute.Compute{
			ComputeSpec: compute.ComputeSpec{Name: "a", Type: compute.ComputeTypeCluster, Location: "local", Size: "Standard_DS3_v2",
				MinInstances: &one, MaxInstances: &two, IdleTimeBeforeScaleDown: &idle},
			Workspace: "ws", Version: 1, ProvisioningState: compute.ProvisioningSucceeded,
			ProvisioningErrors: []compute.ProvisioningError{}, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat})
	c := New(svc, svc.Config(), nil)
	// Far from the server's clock, so a source that read it would not
	// agree with both passes below.
	t0 := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	c.provisionFailed("ws/a", errors.New("boom"), t0) // backoff until t0+2s
	minAt := func(now time.Time) int {
		t.Helper()
		snap, err := scaleSource{c}.Snapshot(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Clusters) != 1 {
			t.Fatalf("clusters %+v", snap.Clusters)
		}
		return snap.Clusters[0].MinInstances
	}
	if got := minAt(t0.Add(time.Second)); got != 0 {
		t.Errorf("during the backoff: min_instances %d, want 0 (held back)", got)
	}
	if got := minAt(t0.Add(3 * time.Second)); got != 1 {
		t.Errorf("after the backoff: min_instances %d, want 1", got)
	}
}
