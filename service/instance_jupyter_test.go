package service_test

import (
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// An instance whose host has no Jupyter runs without a notebook, and
// says why where its user looks: the notebook's entry in `compute show`
// carries the reason, an event says it, and the proxy's answer for the
// notebook gives the install hint instead of a bare "no application".
func TestInstanceWithoutJupyterSaysWhy(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	spec := &compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2"}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	h.pass()
	ids := h.joinAll()
	if len(ids) != 1 {
		t.Fatalf("nodes joined: %v", ids)
	}
	const why = "Jupyter is not installed on this host (...): apt-get install jupyter-notebook python3-ipykernel"
	report := &node.InstanceReport{Phase: node.InstancePhaseRunning, Apps: []compute.InstanceAppReport{{Name: compute.JupyterApplication, Error: why}}}
	for range 2 {
		if _, err := h.svc.SyncNode(h.ctx, ids[0], &node.AgentSyncRequest{Instance: report}, 0); err != nil {
			t.Fatal(err)
		}
		h.pass()
	}
	c, err := h.svc.FindCompute(admin, ws, "ci1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Instance.State != compute.InstanceRunning {
		t.Fatalf("state %s", c.Instance.State)
	}
	found := false
	for _, a := range c.Applications {
		if a.DisplayName == compute.JupyterApplication {
			found = a.Error == why
		}
	}
	if !found {
		t.Errorf("compute show's applications %+v lack the notebook's reason", c.Applications)
	}
	evs, err := h.svc.ListComputeEvents(admin, ws, "ci1")
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, e := range evs {
		said = said || (e.Kind == "application_unavailable" && strings.Contains(e.Reason, "apt-get install jupyter-notebook"))
	}
	if !said {
		t.Errorf("no application_unavailable event among %+v", evs)
	}
	_, err = h.svc.ResolveInstanceApp(admin, ws, "ci1", compute.JupyterApplication)
	if core.ErrorCode(err) != core.ENOTFOUND || !strings.Contains(err.Error(), "apt-get install jupyter-notebook") {
		t.Errorf("the proxy's answer for the notebook: %v, want 404 with the install hint", err)
	}
}
