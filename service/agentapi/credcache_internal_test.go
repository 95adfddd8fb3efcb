package agentapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/nodelease"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/store"
)

// Entries live for the TTL given; a full cache drops expired entries first
// and keeps fresh ones.
func TestCredCache(t *testing.T) {
	var c credCache
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c.put("h", "n1", t0, credCacheTTL)
	if id, ok := c.get("h", t0.Add(credCacheTTL)); !ok || id != "n1" {
		t.Fatalf("within the TTL: %q %v", id, ok)
	}
	if _, ok := c.get("h", t0.Add(credCacheTTL+time.Millisecond)); ok {
		t.Fatal("trusted past the TTL")
	}
	for i := range credCacheMax - 1 {
		c.put(fmt.Sprint(i), "old", t0, credCacheTTL)
	}
	later := t0.Add(2 * credCacheTTL)
	c.put("fresh", "n2", later, credCacheTTL)
	c.put("fresher", "n3", later, credCacheTTL)
	if len(c.m) != 2 {
		t.Fatalf("%d entries after the sweep, want the 2 fresh ones", len(c.m))
	}
	if id, ok := c.get("fresh", later); !ok || id != "n2" {
		t.Fatalf("fresh entry lost: %q %v", id, ok)
	}
}

// The trust is fixed when the credential is read: a clock stepped back
// does not stretch it (a read "in the future" is a miss), and the TTL is
// the lease within 10 s and a minute.
func TestCredCacheTrustIsBoundedWhenRead(t *testing.T) {
	var c credCache
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c.put("h", "n1", t0, credCacheTTL)
	if _, ok := c.get("h", t0.Add(-time.Second)); ok {
		t.Error("trusted at a time before it was read (a clock stepped back)")
	}
	for lease, want := range map[time.Duration]time.Duration{
		time.Second: credCacheTTL, 30 * time.Second: 30 * time.Second, time.Hour: credCacheMaxTTL,
	} {
		if got := credTTL(lease); got != want {
			t.Errorf("credTTL(%v) = %v, want %v", lease, got, want)
		}
	}
}

// A node's new credential (its revived agent joined) retires the old one at
// once, within the TTL.
func TestCredCacheRetiresReplacedCredential(t *testing.T) {
	var c credCache
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c.put("old", "n1", t0, credCacheTTL)
	c.put("new", "n1", t0.Add(time.Second), credCacheTTL)
	if _, ok := c.get("old", t0.Add(2*time.Second)); ok {
		t.Error("the replaced credential is still trusted")
	}
	if id, ok := c.get("new", t0.Add(2*time.Second)); !ok || id != "n1" {
		t.Errorf("the new credential: %q %v", id, ok)
	}
}

// In a fleet whose lease grew past 10 s, an agent's next sync (a third of
// the lease later) is authenticated from the cache, not by a store read:
// with a 10 s cache every sync of a 10,000-node fleet read the store.
// Past the lease the credential is read again.
func TestCredentialTrustedForTheFleetsLease(t *testing.T) {
	ctx := context.Background()
	ids := make([]string, 40)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%02d", i)
	}
	db, clock := teststore.Open(t)
	const cred = "credential-of-n07"
	if err := db.Update(ctx, func(tx store.Tx) error {
		for _, id := range ids {
			n := &node.Node{ID: id, Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1}
			if id == "n07" {
				n.CredentialHash = identity.HashToken(cred)
			}
			if err := tx.InsertNode(n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	count := func(ctx context.Context) (n int, err error) {
		err = db.View(ctx, func(tx store.Tx) error {
			n, err = tx.CountNodes()
			return err
		})
		return n, err
	}
	// 40 nodes at 4 syncs a second: a 30 s lease, a sync every 10 s.
	s := New(Config{Store: db, NodeLeaseTTL: 10 * time.Second, Clock: clock,
		Lease: nodelease.New(nodelease.Config{Min: 10 * time.Second, MaxRate: 4, Count: count})})
	if id, err := s.AuthenticateNode(ctx, cred); err != nil || id != "n07" {
		t.Fatalf("first authentication: %q %v", id, err)
	}
	// The store no longer knows the credential: only the cache can
	// answer.
	forget(t, db, "n07")
	clock.Advance(20 * time.Second) // two syncs later
	if id, err := s.AuthenticateNode(ctx, cred); err != nil || id != "n07" {
		t.Fatalf("20 s later, within the 30 s lease: %q %v; want it trusted without a read", id, err)
	}
	clock.Advance(11 * time.Second) // past the lease since the read
	if _, err := s.AuthenticateNode(ctx, cred); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Fatalf("past the lease: %v, want the credential read again and refused", err)
	}
}

// forget gives node id a credential no agent holds.
func forget(t *testing.T, db store.Store, id string) {
	t.Helper()
	if err := db.Update(context.Background(), func(tx store.Tx) error {
		n, err := tx.GetNode(id)
		if err != nil {
			return err
		}
		n.CredentialHash = identity.HashToken("another")
		return tx.UpdateNode(n)
	}); err != nil {
		t.Fatal(err)
	}
}
