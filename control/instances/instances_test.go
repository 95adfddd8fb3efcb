package instances_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/control/instances"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
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
	cat, err := compute.NewCatalog([]*compute.Location{{Name: "local", Provider: "fake", Quota: compute.DefaultQuotaLimits()}}, compute.BuiltinSizes(), "local")
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
