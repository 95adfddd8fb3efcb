package armcompute

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/arm/armcore"
	"github.com/shoal-ml/shoal/domain/compute"
)

// An instance that failed to start shows why under Azure's
// properties.properties.errors, as ErrorResponse envelopes; one that did
// not fail has no errors key.
func TestInstanceErrorsOnARM(t *testing.T) {
	yes := true
	c := &compute.Compute{ComputeSpec: compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2", SSHPublicAccessEnabled: &yes},
		Workspace: "ws", State: compute.InstanceCreateFailed,
		Errors: []compute.ProvisioningError{{Code: compute.OperationCreateFailed, Message: "provider local: an agent for node ci1 is already running (pid 4242)"}}}
	b, err := json.Marshal(ToResource(armcore.Scope{Subscription: "s", ResourceGroup: "rg"}, c))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Properties struct {
			Properties struct {
				State  string `json:"state"`
				Errors []struct {
					Error struct{ Code, Message string } `json:"error"`
				} `json:"errors"`
			} `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	ip := r.Properties.Properties
	if ip.State != "CreateFailed" || len(ip.Errors) != 1 || ip.Errors[0].Error.Code != "CreateFailed" || !strings.Contains(ip.Errors[0].Error.Message, "already running") {
		t.Fatalf("properties %s", b)
	}
	c.State, c.Errors = compute.InstanceRunning, nil
	b, _ = json.Marshal(ToResource(armcore.Scope{Subscription: "s", ResourceGroup: "rg"}, c))
	if strings.Contains(string(b), `"errors"`) {
		t.Fatalf("a running instance shows errors: %s", b)
	}
}
