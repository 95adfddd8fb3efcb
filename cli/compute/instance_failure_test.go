package compute

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
)

// A wait for an instance whose create failed says why, not only that
// it did.
func TestInstanceFailureSaysWhy(t *testing.T) {
	c := &compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "ci1"}, State: compute.InstanceCreateFailed,
		LastOperation: &compute.LastOperation{OperationName: compute.OperationCreate, OperationStatus: compute.OperationCreateFailed},
		Errors:        []compute.ProvisioningError{{Code: compute.OperationCreateFailed, Message: "provider local: an agent for node ci1 is already running (pid 4242)"}}}
	err := instanceFailure(c)
	if err == nil || !strings.Contains(err.Error(), "(state CreateFailed): provider local: an agent for node ci1 is already running (pid 4242); see") {
		t.Fatalf("%v", err)
	}
	c.LastOperation.OperationStatus, c.Errors = compute.OperationSucceeded, nil
	if err := instanceFailure(c); err != nil {
		t.Fatalf("a succeeded operation: %v", err)
	}
}
