package agentapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/nodelease"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Every sync tells the agent its pace from the fleet's lease: 40 nodes
// at 4 syncs a second need a 30 s lease, so each syncs every 10 s, and
// its lease runs 30 s plus the grace from its last heartbeat.
func TestSyncTellsTheAgentThePaceOfTheFleetsLease(t *testing.T) {
	ctx := context.Background()
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%02d", i)
	}
	db := storeWithIdleNodes(t, ids...)
	count := func(ctx context.Context) (n int, err error) {
		err = db.View(ctx, func(tx store.Tx) error {
			n, err = tx.CountNodes()
			return err
		})
		return n, err
	}
	s := New(Config{Store: db, NodeLeaseTTL: 10 * time.Second, NodeLeaseGrace: 5 * time.Second,
		Lease: nodelease.New(nodelease.Config{Min: 10 * time.Second, MaxRate: 4, Count: count})})
	resp, err := s.SyncNode(ctx, "n07", &node.AgentSyncRequest{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.HeartbeatInterval != 10*time.Second {
		t.Fatalf("sync's heartbeat interval = %v, want 10s (a third of the fleet's 30 s lease)", resp.HeartbeatInterval)
	}
	var beat time.Time
	if err := db.View(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode("n07")
		beat = n.LastHeartbeat
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if want := beat.Add(35 * time.Second); !resp.LeaseExpires.Equal(want) {
		t.Fatalf("lease expires %v, want %v (30 s lease + 5 s grace from the last heartbeat)", resp.LeaseExpires, want)
	}
	// Without a rate the configured lease is the pace.
	fixed := New(Config{Store: db, NodeLeaseTTL: 9 * time.Second})
	if resp, err := fixed.SyncNode(ctx, "n07", &node.AgentSyncRequest{}, 0); err != nil || resp.HeartbeatInterval != 3*time.Second {
		t.Fatalf("sync with the configured lease: interval %v (%v), want 3s", resp.HeartbeatInterval, err)
	}
}
