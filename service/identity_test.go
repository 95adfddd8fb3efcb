package service_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// A user-assigned identity can be attached by a non-administrator only in a
// workspace where the identity has been granted a role.
func TestAttachingAnIdentityNeedsItsGrantInTheWorkspace(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cat, _ := (&config.Config{}).Catalog(nil)
	svc := service.New(service.Config{Store: store, Catalog: cat})
	admin := identity.WithPrincipal(ctx, &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	if err := svc.EnsureDefaultWorkspace(admin); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateIdentity(admin, "trainer"); err != nil {
		t.Fatal(err)
	}
	bob := identity.WithPrincipal(ctx, &identity.Principal{ID: "user:bob", Name: "bob", Kind: identity.PrincipalUser})
	spec := func() *compute.ComputeSpec {
		return &compute.ComputeSpec{Name: "id-cluster", Identity: &compute.IdentitySpec{Type: "user_assigned",
			UserAssignedIdentities: []compute.UserAssignedIdentity{{ResourceID: "/subscriptions/x/providers/Microsoft.ManagedIdentity/userAssignedIdentities/trainer"}}}}
	}
	_, _, err = svc.CreateOrApplyCompute(bob, core.DefaultWorkspace, spec(), "")
	if core.ErrorCode(err) != core.EFORBIDDEN || core.ErrorField(err) != "identity.user_assigned_identities[0].resource_id" {
		t.Fatalf("attaching an identity without a grant: %v", err)
	}
	if _, err := svc.AssignRole(admin, "identity:trainer", identity.RoleReader, core.DefaultWorkspace); err != nil {
		t.Fatal(err)
	}
	c, _, err := svc.CreateOrApplyCompute(bob, core.DefaultWorkspace, spec(), "")
	if err != nil {
		t.Fatalf("attaching a granted identity: %v", err)
	}
	if got := c.Identity.UserAssignedIdentities[0]; got.ClientID == "" || got.PrincipalID != "identity:trainer" {
		t.Fatalf("attached identity: %+v", got)
	}
}
