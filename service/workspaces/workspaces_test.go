package workspaces_test

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/workspaces"
	"github.com/shoal-ml/shoal/store"
)

// noAccess makes no admin token: these tests do not start a server.
type noAccess struct{}

func (noAccess) BootstrapAdminToken(context.Context) (string, error) { return "", nil }

// The workspace requests over a store and a catalog alone: a new
// workspace takes the default location, a workspace with a compute is
// not deleted (ECONFLICT names it), an empty one is, and the default
// workspace never is.
func TestWorkspaceLifecycle(t *testing.T) {
	ctx := context.Background()
	db, _ := teststore.Open(t)
	cat, err := catalog.NewCatalog([]*catalog.Location{{Name: "local", Provider: "local"}}, nil, "local")
	if err != nil {
		t.Fatal(err)
	}
	s := workspaces.New(workspaces.Config{Store: db, Catalog: cat, Access: noAccess{}})
	ws, err := s.CreateWorkspace(ctx, &core.Workspace{Name: "team"})
	if err != nil || ws.Location != "local" {
		t.Fatalf("created %+v, %v; want it in the default location", ws, err)
	}
	if err := db.Update(ctx, func(tx store.Tx) error {
		c := &compute.Compute{Workspace: "team"}
		c.Name = "cpu"
		return tx.InsertCompute(c)
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWorkspace(ctx, "team"); core.ErrorCode(err) != core.ECONFLICT {
		t.Fatalf("deleting a workspace with a compute: %v; want ECONFLICT", err)
	}
	if _, err := s.CreateWorkspace(ctx, &core.Workspace{Name: "empty"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWorkspace(ctx, "empty"); err != nil {
		t.Fatalf("deleting an empty workspace: %v", err)
	}
	if _, err := s.FindWorkspace(ctx, "empty"); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("a deleted workspace found: %v", err)
	}
	if err := s.DeleteWorkspace(ctx, core.DefaultWorkspace); err == nil {
		t.Fatal("the default workspace was deleted")
	}
}
