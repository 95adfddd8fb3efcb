package service_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// An instance whose start the provider refuses (the local provider's
// "an agent for node … is already running") shows CreateFailed with the
// reason in its errors, as `shoal compute show` and the API return it:
// the reason was kept on the compute and never shown.
func TestInstanceCreateFailedShowsWhy(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	h.prov.OnProvision = func(req node.ProvisionRequest) error {
		return core.Errorf(core.ECONFLICT, "an agent for node %s is already running (pid 4242)", req.Node.ID)
	}
	spec := &compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2"}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.pass()
	}
	c := h.findCompute("ci1")
	if c.State != compute.InstanceCreateFailed {
		t.Fatalf("state %s, want CreateFailed", c.State)
	}
	if len(c.Errors) != 1 || c.Errors[0].Code != compute.OperationCreateFailed || !strings.Contains(c.Errors[0].Message, "is already running (pid 4242)") {
		t.Fatalf("errors %+v, want the provider's reason", c.Errors)
	}
	b, err := json.Marshal(c.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"errors":[{"code":"CreateFailed","message":"`) {
		t.Fatalf("the compute as the API returns it has no errors: %s", b)
	}
	// A restart asked clears it: its own outcome will show.
	h.prov.OnProvision = nil
	if _, err := h.svc.RestartInstance(admin, ws, "ci1"); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if c := h.findCompute("ci1"); len(c.Errors) != 0 {
		t.Fatalf("state %s, errors %+v after a restart was asked, want none", c.State, c.Errors)
	}
}
