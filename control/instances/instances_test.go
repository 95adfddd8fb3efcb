package instances_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/control/instances"
	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/provider/fake"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// The loop runs on its own over the services' store: a deleted instance
// first has its node released through the release it was given (the
// controller's, shared with the other loops), then, with no node left,
// is removed.
func TestRunOnceReleasesThenRemovesADeletedInstance(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertCompute(&compute.Compute{
			ComputeSpec: compute.ComputeSpec{Name: "nb", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2", Location: "local"},
			Workspace:   "ws", Version: 1, ProvisioningState: compute.ProvisioningDeleting,
			ProvisioningErrors: []compute.ProvisioningError{}, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
			Instance: &compute.InstanceStatus{State: compute.InstanceRunning},
		}); err != nil {
			return err
		}
		return tx.InsertNode(&node.Node{ID: "nb-node", Workspace: "ws", Compute: "nb", Location: "local", State: node.NodeIdle,
			Role: node.NodeRoleInstance, CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat})
	var released []string
	loop := instances.New(svc, svc.Config(), func(_ context.Context, n *node.Node) { released = append(released, n.ID) })

	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	if len(released) != 1 || released[0] != "nb-node" {
		t.Fatalf("released %v, want the instance's node", released)
	}
	// The release removes the node, as the controller's does.
	if err := db.Update(ctx, func(tx store.Tx) error { return tx.DeleteNode("nb-node") }); err != nil {
		t.Fatal(err)
	}
	if err := loop.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(tx store.Tx) error {
		_, err := tx.GetCompute("ws", "nb")
		return err
	})
	if core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("the deleted instance is still there (%v)", err)
	}
}

// purging is a provider whose Purge refuses the homes of the instances
// refuse names, as the local provider does while an agent still runs.
type purging struct {
	*fake.Provider
	refuse func(n *node.Node) bool
}

func (p purging) Purge(_ context.Context, n *node.Node) error {
	if p.refuse(n) {
		return core.Errorf(core.ECONFLICT, "an agent for node %s is still running (pid 4242)", n.ID)
	}
	return nil
}

// withProvider is the services with p as every location's provider.
type withProvider struct {
	*service.Services
	p node.Provider
}

func (w withProvider) Provider(*catalog.Location) node.Provider { return w.p }

// One instance whose step fails (its home cannot be removed) does not
// fail the pass nor hold up another: the failure is recorded on it as an
// event, once per retry rather than once per pass, and it is retried
// after its wait on the injected clock. (Every pass failed, and logged,
// while it lasted.)
func TestOneFailingInstanceDoesNotHoldUpOthers(t *testing.T) {
	ctx := context.Background()
	db, clock := teststore.Open(t)
	err := db.Update(ctx, func(tx store.Tx) error {
		for _, name := range []string{"bad", "good"} {
			if err := tx.InsertCompute(&compute.Compute{
				ComputeSpec: compute.ComputeSpec{Name: name, Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2", Location: "local"},
				Workspace:   "ws", Version: 1, ProvisioningState: compute.ProvisioningDeleting,
				ProvisioningErrors: []compute.ProvisioningError{}, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
				Instance: &compute.InstanceStatus{State: compute.InstanceDeleting},
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "fake", Quota: catalog.DefaultQuotaLimits()}}, catalog.BuiltinSizes(), "local")
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{Store: db, Catalog: cat})
	refusing := true
	prov := purging{fake.New(), func(n *node.Node) bool { return refusing && n.Compute == "bad" }}
	l := instances.New(withProvider{svc, prov}, svc.Config(), func(context.Context, *node.Node) {})
	exists := func(name string) bool {
		err := db.View(ctx, func(tx store.Tx) error { _, err := tx.GetCompute("ws", name); return err })
		return core.ErrorCode(err) != core.ENOTFOUND
	}
	failures := func() int {
		var n int
		_ = db.View(ctx, func(tx store.Tx) error {
			evs, err := tx.ListEvents(core.EventFilter{Workspace: "ws", ResourceType: core.ResourceCompute, ResourceName: "bad"})
			for _, e := range evs {
				if e.Kind == instances.EventStepFailed {
					n++
				}
			}
			return err
		})
		return n
	}
	if err := l.RunOnce(ctx, clock.Now()); err != nil {
		t.Fatalf("one instance's failure failed the pass: %v", err)
	}
	if exists("good") {
		t.Fatal("the good instance was not removed in the same pass")
	}
	if !exists("bad") || failures() != 1 {
		t.Fatalf("bad: exists %v, %d failure events; want kept with one", exists("bad"), failures())
	}
	for range 3 {
		if err := l.RunOnce(ctx, clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if n := failures(); n != 1 {
		t.Fatalf("%d failure events after passes within the wait, want 1", n)
	}
	refusing = false
	if err := l.RunOnce(ctx, clock.Advance(loop.DefaultFirstWait)); err != nil {
		t.Fatal(err)
	}
	if exists("bad") {
		t.Fatal("bad was not removed once its home could be")
	}
}
