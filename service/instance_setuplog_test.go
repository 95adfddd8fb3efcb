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

// An instance's setup log (which can hold what its setup scripts print:
// tokens, paths, the user's environment) is read by its user, by
// administrators and by the workspace's Owners; a Reader or a Contributor
// of the workspace who is not its user is refused.
func TestInstanceSetupLogIsItsUsersAndAdmins(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	as := func(name string) *identity.Principal {
		return &identity.Principal{ID: "user:" + name, Name: name, Kind: identity.PrincipalUser}
	}
	for name, role := range map[string]string{"alice": identity.RoleContributor, "bob": identity.RoleReader, "carol": identity.RoleOwner, "dave": identity.RoleContributor} {
		if _, err := h.svc.CreateUser(admin, &identity.User{Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.svc.AssignRole(admin, "user:"+name, role, ws); err != nil {
			t.Fatal(err)
		}
	}
	spec := &compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2",
		CreateOnBehalfOf: &compute.CreateOnBehalfOf{UserObjectID: "alice"}}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	if err := h.files.WriteInstanceLog(ws, "ci1", 0, []byte("export HF_TOKEN=hf_secret\n")); err != nil {
		t.Fatal(err)
	}
	for who, want := range map[string]string{"alice": "", "carol": "", "bob": core.EFORBIDDEN, "dave": core.EFORBIDDEN} {
		ctx := identity.WithPrincipal(h.ctx, as(who))
		f, err := h.svc.OpenInstanceLog(ctx, ws, "ci1", "setup")
		if core.ErrorCode(err) != want {
			t.Errorf("%s: %v; want %q", who, err, want)
		}
		if err == nil {
			data, _ := io.ReadAll(f)
			f.Close()
			if string(data) != "export HF_TOKEN=hf_secret\n" {
				t.Errorf("%s read %q", who, data)
			}
		}
	}
	if f, err := h.svc.OpenInstanceLog(admin, ws, "ci1", "setup"); err != nil {
		t.Errorf("admin: %v", err)
	} else {
		f.Close()
	}
}

// An instance's setup log is bounded by the workspace's log cap like a
// rank's: past it one marker line, then nothing more, whatever the agent
// sends.
func TestInstanceSetupLogIsCutAtTheWorkspaceCap(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	limit := int64(100)
	h.setLimits(&limit, nil)
	if _, err := h.svc.CreateUser(admin, &identity.User{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	// An instance is created only for a member of its workspace.
	if _, err := h.svc.AssignRole(admin, "user:alice", identity.RoleReader, ws); err != nil {
		t.Fatal(err)
	}
	spec := &compute.ComputeSpec{Name: "ci1", Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2",
		CreateOnBehalfOf: &compute.CreateOnBehalfOf{UserObjectID: "alice"}}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	h.step(0)
	nodes := h.nodeIDs("ci1")
	if len(nodes) != 1 {
		t.Fatalf("instance nodes %v", nodes)
	}
	for _, w := range []struct {
		off  int64
		data string
	}{{0, strings.Repeat("a", 60)}, {60, strings.Repeat("b", 60)}, {120, strings.Repeat("c", 1000)}, {1 << 40, "far past the cap"}} {
		if err := h.svc.WriteInstanceSetupLog(h.ctx, nodes[0], w.off, []byte(w.data)); err != nil {
			t.Fatalf("write at %d: %v", w.off, err)
		}
	}
	f, err := h.svc.OpenInstanceLog(admin, ws, "ci1", "setup")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _ := io.ReadAll(f)
	if want := strings.Repeat("a", 60) + strings.Repeat("b", 40) + money.LogCutMarker(limit); string(got) != want {
		t.Errorf("stored setup log %q, want %q", got, want)
	}
}
