package scheduling_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/storetest"
)

// viewStores opens two stores on one database: two servers sharing it.
func viewStores(t *testing.T) (a, b *sqlite.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shoal.db")
	clock := storetest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	for _, s := range []**sqlite.DB{&a, &b} {
		db, err := sqlite.Open(t.Context(), sqlite.Config{Path: path, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		*s = db
	}
	return a, b
}

func viewUpdate(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// checkView compares the view's state with one read from the store whole.
func checkView(t *testing.T, s store.Store, v *scheduling.View, what string) {
	t.Helper()
	var got, want *scheduling.State
	err := s.View(t.Context(), func(tx store.Tx) (err error) {
		if got, err = v.ReadNodes(tx); err != nil {
			return err
		}
		want, err = scheduling.ReadNodes(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []*scheduling.State{got, want} {
		slices.SortFunc(st.Stopped, func(a, b *compute.Compute) int { return strings.Compare(a.Name, b.Name) })
		for _, n := range st.AllNodes() {
			n.LastHeartbeat = time.Time{} // not kept by the view
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the view's state differs from the store's:\n view  %d nodes %v\n store %d nodes %v", what, len(got.AllNodes()), keys(got.AllNodes()), len(want.AllNodes()), keys(want.AllNodes()))
	}
}

func keys(nodes []*node.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID+":"+string(n.State))
	}
	slices.Sort(out)
	return out
}

func viewCompute(name string, max int) *compute.Compute {
	zero, idle := 0, 120
	return &compute.Compute{Workspace: "ws", Version: 1, ProvisioningState: compute.ProvisioningSucceeded,
		ComputeSpec: compute.ComputeSpec{Name: name, Type: compute.ComputeTypeCluster, Size: "Standard_DS3_v2", Location: "local",
			MinInstances: &zero, MaxInstances: &max, IdleTimeBeforeScaleDown: &idle}}
}

func viewNode(id, compute string) *node.Node {
	return &node.Node{ID: id, Workspace: "ws", Compute: compute, Location: "local", State: node.NodeIdle, Version: 1}
}

// TestViewFollowsWrites: the view reads only what changed, and what it
// holds is what a whole read of the store gives, after this server's
// writes and another's (a second store on the same database), after a
// lease renewal (which it does not read), and after deletions pruned
// behind it (then it loads again).
func TestViewFollowsWrites(t *testing.T) {
	s, other := viewStores(t)
	v := scheduling.NewView()
	viewUpdate(t, s, func(tx store.Tx) error {
		if err := tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local"}); err != nil {
			return err
		}
		for _, c := range []*compute.Compute{viewCompute("a", 10), viewCompute("b", 10)} {
			if err := tx.InsertCompute(c); err != nil {
				return err
			}
		}
		for i := range 20 {
			if err := tx.InsertNode(viewNode(fmt.Sprintf("n%02d", i), []string{"a", "b"}[i%2])); err != nil {
				return err
			}
		}
		return nil
	})
	checkView(t, s, v, "first read")
	if reads, full := v.Stats(); reads != 1 || full != 1 {
		t.Fatalf("first read: %d reads, %d full, want 1 and 1", reads, full)
	}

	// This server's writes: a placement, a new node, a deletion.
	viewUpdate(t, s, func(tx store.Tx) error {
		n, err := tx.GetNode("n03")
		if err != nil {
			return err
		}
		n.State, n.CurrentAttemptID, n.IdleSince = node.NodeRunning, "att-1", nil
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		// Nodes whose IDs sort last and in the middle: the view keeps
		// its IDs in order without sorting them all again.
		for _, id := range []string{"n20", "n03b"} {
			if err := tx.InsertNode(viewNode(id, "a")); err != nil {
				return err
			}
		}
		return tx.DeleteNode("n04")
	})
	checkView(t, s, v, "after this server's writes")

	// Another server's writes, and a compute changed there.
	viewUpdate(t, other, func(tx store.Tx) error {
		if err := tx.DeleteNode("n05"); err != nil {
			return err
		}
		n, err := tx.GetNode("n06")
		if err != nil {
			return err
		}
		n.Draining = true
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		c, err := tx.GetCompute("ws", "b")
		if err != nil {
			return err
		}
		*c.MaxInstances, c.Version = 3, c.Version+1
		return tx.UpdateCompute(c)
	})
	checkView(t, s, v, "after another server's writes")

	// A heartbeat changes no record the view keeps.
	viewUpdate(t, other, func(tx store.Tx) error { return tx.RenewNodeLeases([]string{"n07"}) })
	checkView(t, s, v, "after a lease renewal")
	if _, full := v.Stats(); full != 1 {
		t.Fatalf("%d full reads after writes the view could follow, want 1", full)
	}

	// A node deleted and a node of the same ID added again.
	viewUpdate(t, other, func(tx store.Tx) error { return tx.DeleteNode("n08") })
	viewUpdate(t, other, func(tx store.Tx) error { return tx.InsertNode(viewNode("n08", "b")) })
	checkView(t, s, v, "after a node's ID came back")

	// Deletions pruned behind the view: it loads again.
	viewUpdate(t, other, func(tx store.Tx) error { return tx.DeleteNode("n09") })
	viewUpdate(t, other, func(tx store.Tx) error {
		g, err := tx.ViewGeneration()
		if err != nil {
			return err
		}
		return tx.PruneNodeDeletions(g.Gen)
	})
	checkView(t, s, v, "after deletions pruned behind it")
	if _, full := v.Stats(); full != 2 {
		t.Fatalf("%d full reads after a prune past the view, want 2", full)
	}

	// Invalidated (a replica taking the lead): it loads again.
	v.Invalidate()
	checkView(t, s, v, "after Invalidate")
	if _, full := v.Stats(); full != 3 {
		t.Fatalf("%d full reads after Invalidate, want 3", full)
	}
}
