package service_test

import (
	"io"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
)

// A custom application's log reaches the server from the instance's own
// node only, for an application the instance has, bounded by the
// workspace's log cap; it is read as the setup log is: by the instance's
// user, administrators and Owners, not by another Contributor.
func TestInstanceAppLogIsShippedCappedAndItsUsers(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	limit := int64(100)
	h.setLimits(&limit, nil)
	for name, role := range map[string]string{"alice": identity.RoleContributor, "dave": identity.RoleContributor} {
		if _, err := h.svc.CreateUser(admin, &identity.User{Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.svc.AssignRole(admin, "user:"+name, role, ws); err != nil {
			t.Fatal(err)
		}
	}
	spec := &compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2",
		CreateOnBehalfOf: &compute.CreateOnBehalfOf{UserObjectID: "alice"},
		CustomApplications: []*compute.CustomApplication{{Name: "files", Command: "python3 -m http.server 18787",
			Endpoints: []*compute.AppEndpoint{{Target: 18787}}}}}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	nodes := h.nodeIDs("ci1")
	if len(nodes) != 1 {
		t.Fatalf("instance nodes %v", nodes)
	}
	alice := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:alice", Name: "alice", Kind: identity.PrincipalUser})
	if _, err := h.svc.OpenInstanceAppLog(alice, ws, "ci1", "files"); core.ErrorCode(err) != core.ENOTFOUND || !strings.Contains(err.Error(), "no log yet") {
		t.Errorf("before any output: %v, want ENOTFOUND saying there is no log yet", err)
	}
	for _, w := range []struct {
		off  int64
		data string
	}{{0, strings.Repeat("a", 60)}, {60, strings.Repeat("b", 60)}, {120, "more past the cap"}} {
		if err := h.svc.WriteInstanceAppLog(h.ctx, nodes[0], "files", w.off, []byte(w.data)); err != nil {
			t.Fatalf("write at %d: %v", w.off, err)
		}
	}
	if err := h.svc.WriteInstanceAppLog(h.ctx, nodes[0], "other", 0, []byte("x")); core.ErrorField(err) != "app" {
		t.Errorf("an application the instance does not have: %v, want refused naming app", err)
	}
	if err := h.svc.WriteInstanceAppLog(h.ctx, "not-a-node", "files", 0, []byte("x")); err == nil {
		t.Error("a node that is not the instance's wrote its application's log")
	}
	f, err := h.svc.OpenInstanceAppLog(alice, ws, "ci1", "files")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if want := strings.Repeat("a", 60) + strings.Repeat("b", 40) + money.LogCutMarker(limit); string(got) != want {
		t.Errorf("stored application log %q, want %q", got, want)
	}
	dave := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:dave", Name: "dave", Kind: identity.PrincipalUser})
	if _, err := h.svc.OpenInstanceAppLog(dave, ws, "ci1", "files"); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("another Contributor: %v, want EFORBIDDEN", err)
	}
	if f, err := h.svc.OpenInstanceAppLog(admin, ws, "ci1", "files"); err != nil {
		t.Errorf("admin: %v", err)
	} else {
		f.Close()
	}
	if _, err := h.svc.OpenInstanceAppLog(alice, ws, "ci1", "nope"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("an unknown application: %v, want ENOTFOUND", err)
	}
	if _, err := h.svc.OpenInstanceAppLog(alice, ws, "ci1", ""); core.ErrorField(err) != "app" {
		t.Errorf("no application named: %v, want refused naming app", err)
	}
}
