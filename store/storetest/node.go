package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// fullNode returns a node with every field set, including the fields JSON
// leaves out and pointers.
func fullNode(workspace, compute, id string, at time.Time) *node.Node {
	return &node.Node{
		ID:               id,
		Workspace:        workspace,
		Compute:          compute,
		Location:         "westeurope",
		Size:             "Standard_NC6s_v3",
		Family:           "standardNCSv3Family",
		VCPUs:            6,
		LowPriority:      true,
		State:            node.NodeRunning,
		StateReason:      "running job \"train\" ✓",
		PrivateIPAddress: "10.0.0.4",
		PublicIPAddress:  "20.1.2.3",
		Port:             50051,
		CurrentJobName:   "train",
		CurrentAttemptID: "att-1",
		CurrentRank:      1,
		Draining:         true,
		ProviderRef:      "pid:4242",
		JoinTokenHash:    identity.HashToken("join-" + id),
		JoinTokenExpires: at.Add(10 * time.Minute),
		CredentialHash:   identity.HashToken("cred-" + id),
		CreatedOn:        at,
		ReadyOn:          stcheck.Ptr(at.Add(time.Second)),
		IdleSince:        stcheck.Ptr(at.Add(2 * time.Second)),
		LastHeartbeat:    at.Add(3 * time.Second),
		Version:          7,
	}
}

// minimalNode returns a node as first provisioned: no times but CreatedOn,
// no hashes, no pointers.
func minimalNode(workspace, compute, id string, at time.Time) *node.Node {
	return &node.Node{ID: id, Workspace: workspace, Compute: compute, Location: "eastus", State: node.NodePreparing, CreatedOn: at, Version: 1}
}

func getNode(t *testing.T, s store.Store, id string) *node.Node {
	t.Helper()
	var n *node.Node
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		n, err = tx.GetNode(id)
		return err
	})
	return n
}

func insertNodes(t *testing.T, s store.Store, nodes ...*node.Node) {
	t.Helper()
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, n := range nodes {
			if err := tx.InsertNode(n); err != nil {
				return err
			}
		}
		return nil
	})
}

func testNodeRoundTrip(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	full := fullNode("Prod", "GPU-Cluster", "node-1", at)
	minimal := minimalNode("prod", "cpu", "node-2", at)
	insertNodes(t, s, full, minimal)
	stcheck.Equal(t, "GetNode of a full node", getNode(t, s, "node-1"), full)
	got := getNode(t, s, "node-2")
	stcheck.Equal(t, "GetNode of a minimal node", got, minimal)
	if got != nil && (got.ReadyOn != nil || !got.LastHeartbeat.IsZero() || !got.JoinTokenExpires.IsZero()) {
		t.Errorf("minimal node reads back with times set: %s", stcheck.Show(got))
	}

	// Pointers to zero values and zero values of every kind.
	zero := &node.Node{ID: "node-3", Workspace: "prod", ReadyOn: stcheck.Ptr(time.Time{}), CreatedOn: at}
	insertNodes(t, s, zero)
	stcheck.Equal(t, "GetNode of a node of zero values", getNode(t, s, "node-3"), zero)

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertNode(minimalNode("staging", "other", "node-1", at))
	})
	stcheck.WantCode(t, "InsertNode of an existing ID", err, core.ECONFLICT)
	stcheck.Equal(t, "node after a failed insert", getNode(t, s, "node-1"), full)

	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetNode("node-404")
		return err
	})
	stcheck.WantCode(t, "GetNode of a missing node", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetNode("NODE-1")
		return err
	})
	stcheck.WantCode(t, "GetNode with an ID in another case", err, core.ENOTFOUND)
}

func testNodeUpdate(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	n := minimalNode("prod", "gpu", "node-1", at)
	n.JoinTokenHash = identity.HashToken("join")
	n.JoinTokenExpires = at.Add(time.Hour)
	n.ProviderRef = "pid:1"
	insertNodes(t, s, n)

	later := stcheck.Now(clock.Advance(time.Minute))
	var joined *node.Node
	stcheck.Update(t, s, func(tx store.Tx) error {
		n, err := tx.GetNode("node-1")
		if err != nil {
			return err
		}
		// The agent joins: the join token is spent, a credential issued.
		n.JoinTokenHash, n.JoinTokenExpires = "", time.Time{}
		n.CredentialHash = identity.HashToken("cred")
		n.State, n.PrivateIPAddress, n.Port = node.NodeIdle, "127.0.0.1", 40000
		n.ReadyOn, n.IdleSince, n.LastHeartbeat = stcheck.Ptr(tx.Now()), stcheck.Ptr(tx.Now()), tx.Now()
		n.Workspace, n.Compute, n.Location = "Prod", "GPU", "westeurope"
		n.Version++
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		got, err := tx.GetNode("node-1")
		if err != nil {
			return err
		}
		stcheck.Equal(t, "GetNode in the updating transaction", got, n)
		joined = n
		return nil
	})
	got := getNode(t, s, "node-1")
	stcheck.Equal(t, "GetNode after update", got, joined)
	if got.Version != 2 || !got.LastHeartbeat.Equal(later) || !got.CreatedOn.Equal(at) {
		t.Errorf("after update: version %d, heartbeat %v, created %v", got.Version, got.LastHeartbeat, got.CreatedOn)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		_, err := tx.FindNodeByJoinTokenHash(identity.HashToken("join"))
		stcheck.WantCode(t, "FindNodeByJoinTokenHash of a spent token", err, core.ENOTFOUND)
		n, err := tx.FindNodeByCredentialHash(identity.HashToken("cred"))
		if err != nil {
			t.Errorf("FindNodeByCredentialHash after update: %v", err)
		} else {
			stcheck.Equal(t, "FindNodeByCredentialHash after update", n, joined)
		}
		// The indexed columns follow the update.
		list, err := tx.ListNodes(node.NodeFilter{Workspace: "prod", Compute: "gpu", Location: "westeurope"})
		if err != nil || len(list) != 1 {
			t.Errorf("ListNodes after update: %d nodes, %v; want 1", len(list), err)
		}
		return nil
	})

	// Back to nil pointers.
	stcheck.Update(t, s, func(tx store.Tx) error {
		n, err := tx.GetNode("node-1")
		if err != nil {
			return err
		}
		n.ReadyOn, n.IdleSince, n.CredentialHash, n.ProviderRef = nil, nil, "", ""
		n.State = node.NodeLeaving
		joined = n
		return tx.UpdateNode(n)
	})
	stcheck.Equal(t, "GetNode after clearing fields", getNode(t, s, "node-1"), joined)

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateNode(fullNode("prod", "gpu", "node-404", later))
	})
	stcheck.WantCode(t, "UpdateNode of a missing node", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetNode("node-404")
		return err
	})
	stcheck.WantCode(t, "GetNode after a failed update", err, core.ENOTFOUND)
}

func testNodeDelete(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	gone, keep := fullNode("prod", "gpu", "node-1", at), fullNode("prod", "gpu", "node-2", at)
	insertNodes(t, s, gone, keep)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteNode("node-1") })
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetNode("node-1")
		return err
	})
	stcheck.WantCode(t, "GetNode after delete", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.FindNodeByCredentialHash(gone.CredentialHash)
		return err
	})
	stcheck.WantCode(t, "FindNodeByCredentialHash after delete", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteNode("node-1") })
	stcheck.WantCode(t, "DeleteNode twice", err, core.ENOTFOUND)
	stcheck.Equal(t, "the other node", getNode(t, s, "node-2"), keep)
	// The ID is free again.
	insertNodes(t, s, minimalNode("prod", "gpu", "node-1", at))
}

func testNodeList(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	byID := map[string]*node.Node{}
	var nodes []*node.Node
	for _, n := range []*node.Node{
		fullNode("Prod", "GPU", "n-5", at),
		minimalNode("prod", "gpu", "n-1", at), // eastus
		fullNode("prod", "cpu", "n-3", at),
		minimalNode("staging", "GPU", "n-2", at), // eastus
		fullNode("staging", "cpu", "n-4", at),
		minimalNode("prod", "gpu-2", "n-0", at), // eastus
	} {
		byID[n.ID] = n
		nodes = append(nodes, n)
	}
	insertNodes(t, s, nodes...)
	list := func(filter node.NodeFilter, ids ...string) {
		t.Helper()
		var got []*node.Node
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListNodes(filter)
			return err
		})
		want := []*node.Node{}
		for _, id := range ids {
			want = append(want, byID[id])
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListNodes("+stcheck.Show(filter)+")", got, want)
	}
	list(node.NodeFilter{}, "n-0", "n-1", "n-2", "n-3", "n-4", "n-5")
	list(node.NodeFilter{Workspace: "prod"}, "n-0", "n-1", "n-3", "n-5")
	list(node.NodeFilter{Workspace: "PROD", Compute: "gpu"}, "n-1", "n-5")
	list(node.NodeFilter{Workspace: "prod", Compute: "GPU", Location: "westeurope"}, "n-5")
	list(node.NodeFilter{Compute: "Gpu"}, "n-1", "n-2", "n-5")
	list(node.NodeFilter{Compute: "gpu", Location: "eastus"}, "n-1", "n-2")
	list(node.NodeFilter{Location: "eastus"}, "n-0", "n-1", "n-2")
	list(node.NodeFilter{Workspace: "staging", Location: "westeurope"}, "n-4")
	list(node.NodeFilter{Workspace: "nope"})
	list(node.NodeFilter{Workspace: "prod", Compute: "gp"})
	list(node.NodeFilter{Compute: "nope"})
	// By the state column, alone or with the others.
	list(node.NodeFilter{State: node.NodePreparing}, "n-0", "n-1", "n-2")
	list(node.NodeFilter{Workspace: "prod", State: node.NodeRunning}, "n-3", "n-5")
	list(node.NodeFilter{State: node.NodeIdle})
}

// testNodeCountLive: CountLiveNodes follows every state change and the
// draining flag through UpdateNode, and names computes case-insensitively.
func testNodeCountLive(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	count := func(workspace, compute string, want int) {
		t.Helper()
		var got int
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.CountLiveNodes(workspace, compute)
			return err
		})
		if got != want {
			t.Fatalf("CountLiveNodes(%s, %s) = %d, want %d", workspace, compute, got, want)
		}
	}
	a, b, c := minimalNode("prod", "GPU", "n-a", at), minimalNode("prod", "gpu", "n-b", at), minimalNode("prod", "cpu", "n-c", at)
	insertNodes(t, s, a, b, c)
	count("PROD", "Gpu", 2)
	count("prod", "cpu", 1)
	count("prod", "nope", 0)
	set := func(n *node.Node, state string, draining bool) {
		t.Helper()
		n.State, n.Draining = state, draining
		stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateNode(n) })
	}
	set(a, node.NodeIdle, false)
	set(b, node.NodeRunning, false)
	count("prod", "gpu", 2)
	set(a, node.NodeIdle, true) // draining frees its place
	count("prod", "gpu", 1)
	set(b, node.NodeUnusable, false)
	count("prod", "gpu", 0)
	set(a, node.NodeLeaving, false)
	set(b, node.NodeIdle, false) // back
	count("prod", "gpu", 1)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteNode(b.ID) })
	count("prod", "gpu", 0)
}

func testNodeFind(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	a, b := fullNode("prod", "gpu", "node-a", at), fullNode("staging", "gpu", "node-b", at)
	// Nodes with empty hashes must not be found by the empty hash.
	c := minimalNode("prod", "gpu", "node-c", at)
	insertNodes(t, s, a, b, c)
	find := func(what string, fn func(tx store.Tx) (*node.Node, error), want *node.Node) {
		t.Helper()
		var got *node.Node
		err := s.View(t.Context(), func(tx store.Tx) (err error) {
			got, err = fn(tx)
			return err
		})
		if want == nil {
			stcheck.WantCode(t, what, err, core.ENOTFOUND)
			return
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		stcheck.Equal(t, what, got, want)
	}
	for _, n := range []*node.Node{a, b} {
		find("FindNodeByCredentialHash("+n.ID+")", func(tx store.Tx) (*node.Node, error) {
			return tx.FindNodeByCredentialHash(n.CredentialHash)
		}, n)
		find("FindNodeByJoinTokenHash("+n.ID+")", func(tx store.Tx) (*node.Node, error) {
			return tx.FindNodeByJoinTokenHash(n.JoinTokenHash)
		}, n)
	}
	find("FindNodeByCredentialHash of a join token hash", func(tx store.Tx) (*node.Node, error) {
		return tx.FindNodeByCredentialHash(a.JoinTokenHash)
	}, nil)
	find("FindNodeByJoinTokenHash of a credential hash", func(tx store.Tx) (*node.Node, error) {
		return tx.FindNodeByJoinTokenHash(a.CredentialHash)
	}, nil)
	find("FindNodeByCredentialHash of an unknown hash", func(tx store.Tx) (*node.Node, error) {
		return tx.FindNodeByCredentialHash(identity.HashToken("unknown"))
	}, nil)
	find("FindNodeByCredentialHash(\"\")", func(tx store.Tx) (*node.Node, error) {
		return tx.FindNodeByCredentialHash("")
	}, nil)
	find("FindNodeByJoinTokenHash(\"\")", func(tx store.Tx) (*node.Node, error) {
		return tx.FindNodeByJoinTokenHash("")
	}, nil)
	// Also inside a read-write transaction.
	err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.FindNodeByJoinTokenHash("")
		return err
	})
	stcheck.WantCode(t, "FindNodeByJoinTokenHash(\"\") in an Update", err, core.ENOTFOUND)
}

// RenewNodeLeases moves a node's lease to the transaction's time and
// leaves the rest of the node as it was (unknown nodes: testNodeLeasesRenewal).
func testNodeLeaseRenewal(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	n := fullNode("prod", "gpu", "node-1", at)
	insertNodes(t, s, n)
	before := getNode(t, s, "node-1")
	later := stcheck.Now(clock.Advance(time.Minute))
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.RenewNodeLeases([]string{"node-1"}) })
	got := getNode(t, s, "node-1")
	if !got.LastHeartbeat.Equal(later) {
		t.Errorf("lease after renewal: %v, want %v", got.LastHeartbeat, later)
	}
	got.LastHeartbeat = before.LastHeartbeat
	stcheck.Equal(t, "the rest of the node after a renewal", got, before)
	// A later full update keeps the lease it carries.
	stcheck.Update(t, s, func(tx store.Tx) error {
		n, err := tx.GetNode("node-1")
		if err != nil {
			return err
		}
		n.StateReason = "changed"
		return tx.UpdateNode(n)
	})
	if got := getNode(t, s, "node-1"); !got.LastHeartbeat.Equal(later) || got.StateReason != "changed" {
		t.Errorf("after an update: lease %v reason %q", got.LastHeartbeat, got.StateReason)
	}
}

// testNodeLeasesRenewal: RenewNodeLeases moves the lease of every node
// named, across its statements' sizes (1, padded to 16, several of 128
// and a remainder), leaves the rest of each node and every node not
// named as it was, and skips IDs of nodes not stored.
func testNodeLeasesRenewal(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	var all []*node.Node
	for i := range 300 {
		all = append(all, minimalNode("prod", "gpu", fmt.Sprintf("n-%03d", i), at))
	}
	insertNodes(t, s, all...)
	before := map[string]*node.Node{}
	for _, n := range all {
		before[n.ID] = getNode(t, s, n.ID)
	}
	renewed := map[string]bool{}
	for _, batch := range [][]string{
		{"n-000"},
		{"n-001", "n-002", "gone-1"},
		idsFrom(10, 27),     // 17: padded to 128
		idsFrom(40, 40+280), // beyond the nodes: 260 stored and 20 not
	} {
		later := stcheck.Now(clock.Advance(time.Minute))
		stcheck.Update(t, s, func(tx store.Tx) error { return tx.RenewNodeLeases(batch) })
		for _, id := range batch {
			if _, ok := before[id]; !ok {
				continue
			}
			renewed[id] = true
			if got := getNode(t, s, id); !got.LastHeartbeat.Equal(later) {
				t.Errorf("%s: lease after renewal %v, want %v", id, got.LastHeartbeat, later)
			}
		}
	}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.RenewNodeLeases(nil) })
	for _, n := range all {
		got := getNode(t, s, n.ID)
		if !renewed[n.ID] {
			stcheck.Equal(t, n.ID+", not named", got, before[n.ID])
			continue
		}
		got.LastHeartbeat = before[n.ID].LastHeartbeat
		stcheck.Equal(t, "the rest of "+n.ID+" after a renewal", got, before[n.ID])
	}
	if len(renewed) != 1+2+17+260 {
		t.Errorf("%d nodes renewed, want %d", len(renewed), 1+2+17+260)
	}
	err := s.View(t.Context(), func(tx store.Tx) error { return tx.RenewNodeLeases([]string{"n-000"}) })
	if err == nil {
		t.Error("RenewNodeLeases in a View: no error")
	}
}

// idsFrom names the nodes n-<from> to n-<to-1>.
func idsFrom(from, to int) []string {
	var ids []string
	for i := from; i < to; i++ {
		ids = append(ids, fmt.Sprintf("n-%03d", i))
	}
	return ids
}

// testNodeListDue: ListNodesDue returns the nodes neither idle nor
// running, and those last heard at or before the cutoff (a node never
// heard included), following state changes, heartbeats and deletions, and
// decodes them whole.
func testNodeListDue(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	mk := func(id, state string, heard time.Time) *node.Node {
		n := fullNode("prod", "gpu", id, at)
		n.State, n.LastHeartbeat, n.Draining = state, heard, false
		if state != node.NodeRunning {
			n.CurrentAttemptID, n.CurrentJobName, n.CurrentRank = "", "", 0
		}
		return n
	}
	old, fresh := at.Add(-time.Minute), at
	nodes := []*node.Node{
		mk("n-idle-old", node.NodeIdle, old),
		mk("n-idle-fresh", node.NodeIdle, fresh),
		mk("n-running-old", node.NodeRunning, old),
		mk("n-running-fresh", node.NodeRunning, fresh),
		mk("n-preparing", node.NodePreparing, time.Time{}),
		mk("n-leaving", node.NodeLeaving, fresh),
		mk("n-preempted", node.NodePreempted, fresh),
		mk("n-unusable", node.NodeUnusable, fresh),
		mk("n-never-heard", node.NodeIdle, time.Time{}),
	}
	byID := map[string]*node.Node{}
	for _, n := range nodes {
		byID[n.ID] = n
	}
	insertNodes(t, s, nodes...)
	due := func(cutoff time.Time, ids ...string) {
		t.Helper()
		var got []*node.Node
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListNodesDue(cutoff)
			return err
		})
		want := []*node.Node{}
		for _, id := range ids {
			want = append(want, byID[id])
		}
		slices.SortFunc(want, func(a, b *node.Node) int { return strings.Compare(a.ID, b.ID) })
		if len(got) == 0 {
			got = []*node.Node{}
		}
		stcheck.Equal(t, "ListNodesDue("+cutoff.Sub(at).String()+")", got, want)
	}
	unsettled := []string{"n-preparing", "n-leaving", "n-preempted", "n-unusable", "n-never-heard"}
	due(old.Add(-time.Second), unsettled...)
	// At the cutoff is due (the loop's lease runs out strictly after it).
	due(old, append(unsettled, "n-idle-old", "n-running-old")...)
	due(fresh, append(unsettled, "n-idle-old", "n-running-old", "n-idle-fresh", "n-running-fresh")...)
	// A heartbeat takes a node off; a state change puts one on, or off.
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.RenewNodeLeases([]string{"n-idle-old"}) })
	byID["n-idle-old"].LastHeartbeat = stcheck.Now(clock.Now())
	byID["n-running-fresh"].State = node.NodeLeaving
	byID["n-leaving"].State = node.NodeIdle
	// Joining keeps a node live: UpdateNode's path that moves no index.
	byID["n-preparing"].State, byID["n-preparing"].LastHeartbeat = node.NodeIdle, fresh
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, id := range []string{"n-running-fresh", "n-leaving", "n-preparing"} {
			if err := tx.UpdateNode(byID[id]); err != nil {
				return err
			}
		}
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteNode("n-unusable") })
	due(old, "n-running-fresh", "n-preempted", "n-never-heard", "n-running-old")
}

// testNodeCountByState: CountNodesByState groups a compute's nodes by
// state, draining and pulling (names compared case-insensitively, other
// computes and workspaces left out), and follows state changes on both of
// UpdateNode's paths (the one that keeps a node live and the one that
// does not) and deletions.
func testNodeCountByState(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	mk := func(ws, comp, id, state string, draining bool, pulling ...string) *node.Node {
		n := fullNode(ws, comp, id, at)
		n.State, n.Draining, n.PullingImages = state, draining, pulling
		if state != node.NodeRunning {
			n.CurrentAttemptID, n.CurrentJobName, n.CurrentRank = "", "", 0
		}
		return n
	}
	byID := map[string]*node.Node{}
	nodes := []*node.Node{
		mk("prod", "gpu", "c-idle-1", node.NodeIdle, false),
		mk("prod", "gpu", "c-idle-2", node.NodeIdle, false),
		mk("prod", "gpu", "c-pulling", node.NodeIdle, false, "registry.example/train:1"),
		mk("prod", "gpu", "c-running", node.NodeRunning, false),
		mk("prod", "gpu", "c-draining", node.NodeRunning, true),
		mk("prod", "gpu", "c-leaving", node.NodeLeaving, false),
		mk("prod", "cpu", "c-other-compute", node.NodeIdle, false),
		mk("dev", "gpu", "c-other-workspace", node.NodeIdle, false),
	}
	for _, n := range nodes {
		byID[n.ID] = n
	}
	insertNodes(t, s, nodes...)
	count := func(what string, want ...node.StateCount) {
		t.Helper()
		var got []node.StateCount
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.CountNodesByState("PROD", "Gpu")
			return err
		})
		if len(want) == 0 {
			want = nil
		}
		stcheck.Equal(t, "CountNodesByState "+what, got, want)
	}
	stcheck.View(t, s, func(tx store.Tx) error {
		n, err := tx.CountNodes()
		if err == nil && n != len(nodes) {
			t.Errorf("CountNodes = %d, want %d (every compute's, every workspace's)", n, len(nodes))
		}
		return err
	})
	count("as inserted",
		node.StateCount{State: node.NodeIdle, Count: 2},
		node.StateCount{State: node.NodeIdle, Pulling: true, Count: 1},
		node.StateCount{State: node.NodeLeaving, Count: 1},
		node.StateCount{State: node.NodeRunning, Count: 1},
		node.StateCount{State: node.NodeRunning, Draining: true, Count: 1})
	// The pull ends and the running node finishes: UpdateNode's path
	// that keeps a node live. The draining node leaves: the other.
	byID["c-pulling"].PullingImages = nil
	byID["c-running"].State, byID["c-running"].CurrentAttemptID, byID["c-running"].CurrentJobName, byID["c-running"].CurrentRank = node.NodeIdle, "", "", 0
	byID["c-draining"].State = node.NodeLeaving
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, id := range []string{"c-pulling", "c-running", "c-draining"} {
			if err := tx.UpdateNode(byID[id]); err != nil {
				return err
			}
		}
		return tx.DeleteNode("c-leaving")
	})
	count("after updates and a deletion",
		node.StateCount{State: node.NodeIdle, Count: 4},
		node.StateCount{State: node.NodeLeaving, Draining: true, Count: 1})
	var none []node.StateCount
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		none, err = tx.CountNodesByState("prod", "no-such-compute")
		return err
	})
	if len(none) != 0 {
		t.Errorf("CountNodesByState of a compute without nodes = %v, want none", none)
	}
}
