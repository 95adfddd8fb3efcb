package service_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/config"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/sqlite"
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
	admin := shoal.WithPrincipal(ctx, &shoal.Principal{ID: "admin", Name: "admin", Kind: shoal.PrincipalAdmin, Admin: true})
	if err := svc.EnsureDefaultWorkspace(admin); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateIdentity(admin, "trainer"); err != nil {
		t.Fatal(err)
	}
	bob := shoal.WithPrincipal(ctx, &shoal.Principal{ID: "user:bob", Name: "bob", Kind: shoal.PrincipalUser})
	spec := func() *shoal.ComputeSpec {
		return &shoal.ComputeSpec{Name: "id-cluster", Identity: &shoal.IdentitySpec{Type: "user_assigned",
			UserAssignedIdentities: []shoal.UserAssignedIdentity{{ResourceID: "/subscriptions/x/providers/Microsoft.ManagedIdentity/userAssignedIdentities/trainer"}}}}
	}
	_, _, err = svc.CreateOrApplyCompute(bob, shoal.DefaultWorkspace, spec(), "")
	if shoal.ErrorCode(err) != shoal.EFORBIDDEN || shoal.ErrorField(err) != "identity.user_assigned_identities[0].resource_id" {
		t.Fatalf("attaching an identity without a grant: %v", err)
	}
	if _, err := svc.AssignRole(admin, "identity:trainer", shoal.RoleReader, shoal.DefaultWorkspace); err != nil {
		t.Fatal(err)
	}
	c, _, err := svc.CreateOrApplyCompute(bob, shoal.DefaultWorkspace, spec(), "")
	if err != nil {
		t.Fatalf("attaching a granted identity: %v", err)
	}
	if got := c.Identity.UserAssignedIdentities[0]; got.ClientID == "" || got.PrincipalID != "identity:trainer" {
		t.Fatalf("attached identity: %+v", got)
	}
}
