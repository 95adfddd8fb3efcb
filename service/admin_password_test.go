package service_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// A cluster's SSH admin_password is kept only as a salted hash: the store
// never holds it, the API never returns it, and the nodes check logins
// against the stored hash.
func TestClusterAdminPasswordIsStoredOnlyAsASaltedHash(t *testing.T) {
	const password = "Sup3r-Secret-Pass!"
	h := newHarness(t, "")
	admin := h.adminCtx()
	minN, maxN, idle, on := 0, 1, 120, true
	spec := func(pw string) *compute.ComputeSpec {
		return &compute.ComputeSpec{Name: "ssh", Type: "amlcompute", Size: "Standard_DS3_v2",
			MinInstances: &minN, MaxInstances: &maxN, IdleTimeBeforeScaleDown: &idle, SSHPublicAccessEnabled: &on,
			SSHSettings: &compute.SSHSettings{AdminUsername: "azureuser", AdminPassword: pw}}
	}
	c, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec(password), "")
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Redacted(); r.SSHSettings.AdminPassword != "" || r.SSHSettings.AdminPasswordHash != "" {
		t.Fatalf("what the API returns carries the password or its hash: %+v", r.SSHSettings)
	}
	// The raw database files (the WAL included) never saw the password.
	files, _ := filepath.Glob(h.store.Path() + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(password)) {
			t.Fatalf("%s holds the admin password in the clear", filepath.Base(f))
		}
	}
	stored, err := h.svc.FindCompute(admin, ws, "ssh")
	if err != nil {
		t.Fatal(err)
	}
	if s := stored.SSHSettings; s.AdminPassword != "" || s.AdminPasswordHash == "" || !s.PasswordMatches(password) || s.PasswordMatches("Sup3r-Secret-Pass?") {
		t.Fatalf("stored SSH settings: %+v", s)
	}
	// The same document again is no change; another password is a change
	// of a fixed field.
	if got, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec(password), ""); err != nil || got.Version != stored.Version {
		t.Fatalf("applying the same document: version %d→%v, %v", stored.Version, got, err)
	}
	if _, _, err := h.svc.CreateOrApplyCompute(admin, ws, spec("An0ther-Secret-Pass"), ""); core.ErrorCode(err) != core.ECONFLICT || core.ErrorField(err) != "ssh_settings" {
		t.Fatalf("another password: %v, want ECONFLICT on ssh_settings", err)
	}
	// A node learns the salt and hash, and they check the password.
	if err := h.ctrl.ReconcileComputes(h.ctx); err != nil {
		t.Fatal(err)
	}
	h.submit("j", "ssh", 1, "")
	h.step(0)
	ids := h.joinAll()
	if len(ids) != 1 {
		t.Fatalf("joined %v", ids)
	}
	resp, err := h.svc.SyncNode(h.ctx, ids[0], &node.AgentSyncRequest{First: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.SSH == nil || resp.SSH.PasswordSHA256 == "" || compute.NodePasswordHash(resp.SSH.PasswordSalt, password) != resp.SSH.PasswordSHA256 {
		t.Fatalf("the node's SSH settings: %+v", resp.SSH)
	}
}
