package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
)

// An instance's shells, setup scripts and custom applications run as its
// assigned user's OS account, so creating one on behalf of another user
// must not let the creator run code, or log in, as that user. Mallory
// (Contributor in her own workspace malws and in default) tries it against
// alice (Reader in default only).
func TestInstanceOnBehalfOfCannotRunAsAnotherUser(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	if _, err := h.svc.CreateWorkspace(admin, &core.Workspace{Name: "malws"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct{ user, role, ws string }{
		{"alice", identity.RoleReader, ws}, {"mallory", identity.RoleContributor, "malws"}, {"mallory", identity.RoleContributor, ws},
		{"nobody", "", ""},
	} {
		if _, err := h.svc.CreateUser(admin, &identity.User{Name: a.user}); err != nil && core.ErrorCode(err) != core.ECONFLICT {
			t.Fatal(err)
		}
		if a.role != "" {
			if _, err := h.svc.AssignRole(admin, "user:"+a.user, a.role, a.ws); err != nil {
				t.Fatal(err)
			}
		}
	}
	mallory := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:mallory", Name: "mallory", Kind: identity.PrincipalUser})
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMallorysOwnKeyMallorysOwnKeyMallory0 mallory@evil"
	yes := true
	script := func() *compute.SetupScripts {
		return &compute.SetupScripts{CreationScript: &compute.SetupScript{Command: "cat ~/../../*/home/secret.txt"}}
	}
	apps := func() []*compute.CustomApplication {
		return []*compute.CustomApplication{{Name: "web", Command: "python3 -m http.server 8080",
			Endpoints: []*compute.AppEndpoint{{Target: 8080, Published: 8080}}}}
	}
	spec := func(name, forUser string) *compute.ComputeSpec {
		s := &compute.ComputeSpec{Name: name, Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2"}
		if forUser != "" {
			s.CreateOnBehalfOf = &compute.CreateOnBehalfOf{UserObjectID: forUser}
		}
		return s
	}
	cases := []struct {
		name, workspace, field, code string
		who                          func() *compute.ComputeSpec
		ctx                          string // "admin" or "mallory"
	}{
		// (a) The assigned user needs a role in the instance's workspace.
		{"mallory for alice in malws", "malws", "create_on_behalf_of.user_object_id", core.EINVALID,
			func() *compute.ComputeSpec { s := spec("mal1x", "alice"); s.SetupScripts = script(); return s }, "mallory"},
		{"mallory for alice in malws, nothing to run", "malws", "create_on_behalf_of.user_object_id", core.EINVALID,
			func() *compute.ComputeSpec { return spec("mal2x", "alice") }, "mallory"},
		{"admin for a user without a role", ws, "create_on_behalf_of.user_object_id", core.EINVALID,
			func() *compute.ComputeSpec { return spec("mal3x", "nobody") }, "admin"},
		// (b) What would run as alice, or log in as her, is refused.
		{"setup script", ws, "setup_scripts", core.EFORBIDDEN,
			func() *compute.ComputeSpec { s := spec("mal4x", "alice"); s.SetupScripts = script(); return s }, "mallory"},
		{"custom application", ws, "custom_applications", core.EFORBIDDEN,
			func() *compute.ComputeSpec { s := spec("mal5x", "alice"); s.CustomApplications = apps(); return s }, "mallory"},
		{"SSH key", ws, "ssh_settings.ssh_key_value", core.EFORBIDDEN,
			func() *compute.ComputeSpec {
				s := spec("mal6x", "alice")
				s.SSHPublicAccessEnabled = &yes
				s.SSHSettings = &compute.SSHSettings{SSHKeyValue: key}
				return s
			}, "mallory"},
		// Allowed: nothing that runs as alice; her own; an administrator's.
		{"plain instance for alice", ws, "", "",
			func() *compute.ComputeSpec { s := spec("okay1x", "alice"); s.SSHPublicAccessEnabled = &yes; return s }, "mallory"},
		{"mallory for herself with everything", "malws", "", "",
			func() *compute.ComputeSpec {
				s := spec("okay2x", "mallory")
				s.SetupScripts, s.CustomApplications = script(), apps()
				s.SSHPublicAccessEnabled = &yes
				s.SSHSettings = &compute.SSHSettings{SSHKeyValue: key}
				return s
			}, "mallory"},
		{"admin for alice with a script (the Azure seed)", ws, "", "",
			func() *compute.ComputeSpec { s := spec("okay3x", "alice"); s.SetupScripts = script(); return s }, "admin"},
	}
	for _, c := range cases {
		ctx := mallory
		if c.ctx == "admin" {
			ctx = admin
		}
		out, _, err := h.svc.CreateOrApplyCompute(ctx, c.workspace, c.who(), "")
		if c.code == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if core.ErrorCode(err) != c.code {
			t.Errorf("%s: %v (code %q); want %s", c.name, err, core.ErrorCode(err), c.code)
			continue
		}
		var e *core.Error
		if !errors.As(err, &e) || e.Field != c.field {
			t.Errorf("%s: %v; want the field %s named", c.name, err, c.field)
		}
		if c.code == core.EFORBIDDEN && (!strings.Contains(err.Error(), "alice's account") || !strings.Contains(err.Error(), "administrator")) {
			t.Errorf("%s: %v; want why (it would run as alice's account; only an administrator may)", c.name, err)
		}
		if out != nil {
			t.Errorf("%s: created %s", c.name, out.Name)
		}
	}
	if c := h.findCompute("okay3x"); c == nil || c.Instance.SSOEnabled {
		t.Errorf("the admin's instance for alice with a setup script: %+v; want SSO off until she enables it", c)
	}
	plain := spec("mal6x", "alice")
	plain.SSHPublicAccessEnabled = &yes
	if _, _, err := h.svc.CreateOrApplyCompute(mallory, ws, plain, ""); err != nil {
		t.Fatalf("a plain instance for alice: %v", err)
	}
	// A refused SSH key does not get in later either: only alice sets it.
	key2 := spec("mal6x", "alice")
	key2.SSHPublicAccessEnabled = &yes
	key2.SSHSettings = &compute.SSHSettings{SSHKeyValue: key}
	if _, _, err := h.svc.CreateOrApplyCompute(mallory, ws, key2, ""); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("mallory re-applying alice's instance with her key: %v; want forbidden", err)
	}
}
