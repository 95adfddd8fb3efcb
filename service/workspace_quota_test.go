package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/money"
)

// A workspace's own quota of a family caps its clusters below the
// location's (Azure's workspace-level quota): with 8 vCPUs of
// standardDSv2Family, a cluster of 4-vCPU nodes gets two nodes although
// the location allows 100 vCPUs; the third job waits with the workspace's
// quota as its reason; raising the quota lets it go on.
func TestWorkspaceQuotaCapsScaleUp(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	h.compute("cpu", 1, 4, 120)

	set := func(limit int) money.QuotaUpdateResult {
		t.Helper()
		res, err := h.svc.UpdateWorkspaceQuotas(admin, "local", []money.QuotaUpdate{{Workspace: ws, Family: "StandardDSv2Family", Limit: limit}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	// The rules: under the location's 100, above min_instances' 4 vCPUs.
	if r := set(101); r.Status != money.QuotaExceedsSubscriptionLimit || !strings.Contains(r.Message, "100") {
		t.Errorf("limit 101: %+v", r)
	}
	if r := set(3); r.Status != money.QuotaBelowClusterMinimum {
		t.Errorf("limit 3 under a min_instances of one 4-vCPU node: %+v", r)
	}
	if res, err := h.svc.UpdateWorkspaceQuotas(admin, "local", []money.QuotaUpdate{{Workspace: ws, Family: "noSuchFamily", Limit: 8}}); err != nil || res[0].Status != money.QuotaInvalidFamily {
		t.Errorf("an unknown family: %+v %v", res, err)
	}
	if _, err := h.svc.UpdateWorkspaceQuotas(h.ctx, "local", []money.QuotaUpdate{{Workspace: ws, Family: "standardDSv2Family", Limit: 8}}); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("no principal: %v", err)
	}
	if r := set(8); r.Status != money.QuotaSuccess || r.Family != "standardDSv2Family" {
		t.Fatalf("limit 8: %+v", r)
	}
	list, err := h.svc.ListWorkspaceQuotas(admin, "local")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, q := range list {
		if q.Workspace == ws && q.Family == "standardDSv2Family" {
			found = q.Limit == 8 && q.Own
		}
	}
	if !found {
		t.Fatalf("quota list does not show the workspace's own limit of 8: %+v", list)
	}

	for _, name := range []string{"j1", "j2", "j3"} {
		h.submit(name, "cpu", 1, "")
	}
	h.step(0)
	h.step(time.Second)
	if n := h.provisions(); n != 2 {
		t.Fatalf("%d provisions under the workspace's 8 vCPUs, want 2", n)
	}
	h.wantEvent("cpu", "blocked: workspace "+ws+" quota standardDSv2Family 8/8 vCPUs")
	h.joinAll()
	h.step(0)
	h.step(0)
	if j := h.wantJob("j3", job.JobQueued); !strings.Contains(j.StatusReason, "workspace "+ws+" quota") {
		t.Fatalf("j3 status_reason %q does not name the workspace's quota", j.StatusReason)
	}

	if r := set(12); r.Status != money.QuotaSuccess {
		t.Fatalf("limit 12: %+v", r)
	}
	h.step(time.Second)
	if n := h.provisions(); n != 3 {
		t.Fatalf("%d provisions after raising the quota to 12, want 3", n)
	}
}

// A new compute instance holds its quota from its creation, so creating
// one beyond the workspace's own quota is refused with EQUOTA, and
// nothing is stored (the probe of its quota once ignored the workspace's
// limits: it did not know the workspace).
func TestWorkspaceQuotaRefusesAnInstance(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	if res, err := h.svc.UpdateWorkspaceQuotas(admin, "local", []money.QuotaUpdate{{Workspace: ws, Family: "standardDSv2Family", Limit: 6}}); err != nil || res[0].Status != money.QuotaSuccess {
		t.Fatalf("limit 6: %+v %v", res, err)
	}
	spec := func(name string) *compute.ComputeSpec {
		return &compute.ComputeSpec{Name: name, Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2"}
	}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec("ci1"), ""); err != nil {
		t.Fatalf("the first 4-vCPU instance under 6: %v", err)
	}
	_, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec("ci2"), "")
	if core.ErrorCode(err) != core.EQUOTA || !strings.Contains(core.ErrorMessage(err), "workspace "+ws+"'s quota for standardDSv2Family would be 8/6") {
		t.Fatalf("a second one: %v", err)
	}
	if _, err := h.svc.FindCompute(admin, ws, "ci2"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("the refused instance was stored: %v", err)
	}
}
