package nodes

import (
	"context"
	"slices"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// A released node's quota is the location's and, when its workspace has
// limits of its own, the workspace's: the computes asked for a pass are
// its own, its location's, and its workspace's only then; a job slot's
// are its instance's alone.
func TestQuotaSharers(t *testing.T) {
	ctx := context.Background()
	db, _ := teststore.Open(t)
	// A compute keeps its location as written: "near" is an alias of
	// "local".
	location := func(name string) string {
		if name == "near" {
			return "local"
		}
		return name
	}
	err := db.Update(ctx, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "other", Location: "local", CreatedOn: tx.Now()}); err != nil {
			return err
		}
		for _, c := range []struct{ ws, name, loc string }{
			{"ws", "a", "local"}, {"ws", "aliased", "near"}, {"other", "b", "local"}, {"ws", "c", "lab"}, {"other", "d", "lab"},
		} {
			cl := teststore.Cluster(tx, c.name)
			cl.Workspace, cl.Location = c.ws, c.loc
			if err := tx.InsertCompute(cl); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sharers := func(n *node.Node) (keys []string) {
		t.Helper()
		err := db.View(ctx, func(tx store.Tx) (err error) {
			keys, err = quotaSharers(tx, n, location)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		return keys
	}
	key := compute.ComputeKey
	n := &node.Node{ID: "a-n1", Workspace: "ws", Compute: "a", Location: "local", VCPUs: 4}
	if got, want := sharers(n), []string{key("other", "b"), key("ws", "a"), key("ws", "aliased")}; !slices.Equal(got, want) {
		t.Errorf("without workspace limits: %q, want %q", got, want)
	}
	if err := db.Update(ctx, func(tx store.Tx) error { return tx.PutWorkspaceQuota("ws", "standardDSv2Family", 8) }); err != nil {
		t.Fatal(err)
	}
	if got, want := sharers(n), []string{key("other", "b"), key("ws", "a"), key("ws", "aliased"), key("ws", "c")}; !slices.Equal(got, want) {
		t.Errorf("with workspace limits: %q, want %q", got, want)
	}
	slot := &node.Node{ID: "a-j1", Workspace: "ws", Compute: "a", Location: "local", Role: node.NodeRoleJobSlot}
	if got, want := sharers(slot), []string{key("ws", "a")}; !slices.Equal(got, want) {
		t.Errorf("a job slot: %q, want %q", got, want)
	}
}
