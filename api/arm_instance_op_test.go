package api_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/store"
)

// An instance's create operation, which Azure's SDKs poll before reading
// the instance, is done when the instance is, not when its spec was
// accepted: its provisioning state turns Succeeded before it runs, and an
// SDK's create then ended with the instance still Creating.
func TestARMInstanceCreateOperationWaitsForTheInstance(t *testing.T) {
	e := newTestEnv(t)
	const ws = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/default"
	const v = "?api-version=2024-04-01"
	if resp, body := do(t, e.ts, e.admin, "PUT", ws+"/computes/opci"+v, `{"properties":{"computeType":"ComputeInstance","properties":{"vmSize":"Standard_DS3_v2"}}}`, nil); resp.StatusCode >= 300 {
		t.Fatalf("PUT: %d %v", resp.StatusCode, body)
	}
	// As the controller's reconcile leaves it: the spec provisioned, the
	// instance still being created.
	err := e.store.Update(context.Background(), func(tx store.Tx) error {
		c, err := tx.GetCompute("default", "opci")
		if err != nil {
			return err
		}
		c.ProvisioningState = compute.ProvisioningSucceeded
		return tx.UpdateCompute(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, body := do(t, e.ts, e.admin, "GET", ws+"/computes/opci/operations/create"+v, "", nil)
	if body["status"] != "InProgress" {
		t.Fatalf("the create operation of an instance still Creating: %v, want InProgress", body["status"])
	}
}
