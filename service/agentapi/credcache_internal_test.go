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
	"github.com/shoal-ml/shoal/store/storetest"
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
	// An old agent's request read its credential before the join and
	// records it after: the join's stands.
	c.put("old", "n1", t0.Add(500*time.Millisecond), credCacheTTL)
	if _, ok := c.get("old", t0.Add(2*time.Second)); ok {
		t.Error("a read begun before the join brought back the credential it retired")
	}
	if _, ok := c.get("new", t0.Add(2*time.Second)); !ok {
		t.Error("a read begun before the join retired the join's credential")
	}
}

// In a fleet whose lease grew past 10 s, an agent's next sync (a third of
// the lease later) is authenticated from the cache, not by a store read:
// with a 10 s cache every sync of a 10,000-node fleet read the store.
// Past the lease the credential is read again.
func TestCredentialTrustedForTheFleetsLease(t *testing.T) {
	ctx := context.Background()
	const cred = "credential-of-n07"
	s, db, clock := fleetOf40(t, cred)
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

// A read of the node that found the cached credential trusts it again
// from the read; one that found another drops the cached one; none makes
// a hash the latest, so a read begun before a join cannot bring back the
// credential the join retired.
func TestCredCacheRenew(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var c credCache
	c.put("h", "n1", t0, credCacheTTL)
	c.renew("h", "n1", t0.Add(8*time.Second), credCacheTTL)
	if _, ok := c.get("h", t0.Add(15*time.Second)); !ok {
		t.Error("not trusted again after a read that found it")
	}
	c.renew("h", "n1", t0.Add(-time.Second), credCacheTTL) // an older read
	if e := c.m["h"]; !e.at.Equal(t0.Add(8 * time.Second)) {
		t.Errorf("an older read moved the trust to %v", e.at)
	}
	c.renew("other", "n2", t0, credCacheTTL)
	if _, ok := c.m["other"]; ok {
		t.Error("a read of an uncached node added an entry")
	}

	c.put("new", "n1", t0.Add(9*time.Second), credCacheTTL) // a join here
	c.renew("h", "n1", t0.Add(9*time.Second), credCacheTTL) // a read begun before it
	if _, ok := c.get("h", t0.Add(10*time.Second)); ok {
		t.Error("a read begun before the join brought back the retired credential")
	}
	if _, ok := c.get("new", t0.Add(10*time.Second)); ok {
		t.Error("the join's credential still trusted after a read that named another: want it read again")
	}

	c.put("h2", "n3", t0, credCacheTTL)
	c.renew("h3", "n3", t0.Add(time.Second), credCacheTTL) // replaced elsewhere
	if _, ok := c.get("h2", t0.Add(2*time.Second)); ok {
		t.Error("a credential the store no longer names is still trusted")
	}
	if _, ok := c.get("h3", t0.Add(2*time.Second)); ok {
		t.Error("a read made a credential the latest without authenticating it")
	}
}

// An agent's sync vouches for its credential: in a fleet whose lease is
// 30 s, a credential read once and then seen by every sync is never read
// again on its own (a third of the syncs read it before). A credential
// the store no longer names (replaced by a join on another server) is
// refused at the request after the sync that saw it, not when its cache
// entry expires.
func TestASyncVouchesForItsCredential(t *testing.T) {
	ctx := context.Background()
	const cred = "credential-of-n07"
	s, db, clock := fleetOf40(t, cred)
	sync := func() {
		t.Helper()
		id, err := s.AuthenticateNode(ctx, cred)
		if err != nil {
			t.Fatalf("authentication at %v: %v", clock.Now(), err)
		}
		if _, err := s.SyncNode(ctx, id, &node.AgentSyncRequest{}, 0); err != nil {
			t.Fatalf("sync at %v: %v", clock.Now(), err)
		}
	}
	sync() // the credential read at 0 s
	clock.Advance(10 * time.Second)
	sync()
	clock.Advance(10 * time.Second)
	sync() // the node read at 20 s
	// Past the lease since the credential's own read, within it since
	// the last sync's: had the cache gone to the store, this would fail.
	hide(t, db, "n07", func() {
		clock.Advance(11 * time.Second)
		if id, err := s.AuthenticateNode(ctx, cred); err != nil || id != "n07" {
			t.Fatalf("31 s after the credential's read, 11 s after the last sync: %q %v; want it trusted without a read", id, err)
		}
	})

	// Replaced on another server: this one's cache still has it, and the
	// next sync's read names another.
	forget(t, db, "n07")
	clock.Advance(time.Second)
	sync()
	if _, err := s.AuthenticateNode(ctx, cred); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Fatalf("after a sync read another credential: %v, want the old one read again and refused", err)
	}
}

// hide gives node id a credential no agent holds while fn runs, and its
// own back after.
func hide(t *testing.T, db store.Store, id string, fn func()) {
	t.Helper()
	var was string
	set := func(to func(string) string) {
		if err := db.Update(context.Background(), func(tx store.Tx) error {
			n, err := tx.GetNode(id)
			if err != nil {
				return err
			}
			was, n.CredentialHash = n.CredentialHash, to(n.CredentialHash)
			return tx.UpdateNode(n)
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(func(string) string { return identity.HashToken("hidden") })
	orig := was
	fn()
	set(func(string) string { return orig })
}

// fleetOf40 is a server over 40 idle nodes, n07's credential cred, whose
// lease the fleet stretches: at 4 syncs a second, a 30 s lease and a sync
// every 10 s.
func fleetOf40(t *testing.T, cred string) (*Server, store.Store, *storetest.Clock) {
	t.Helper()
	db, clock := teststore.Open(t)
	if err := db.Update(context.Background(), func(tx store.Tx) error {
		for i := range 40 {
			n := &node.Node{ID: fmt.Sprintf("n%02d", i), Workspace: "ws", Compute: "cpu", Location: "local", State: node.NodeIdle,
				CreatedOn: tx.Now(), LastHeartbeat: tx.Now(), Version: 1, CredentialHash: identity.HashToken(fmt.Sprint("credential-of-", i))}
			if i == 7 {
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
	s := New(Config{Store: db, NodeLeaseTTL: 10 * time.Second, Clock: clock,
		Lease: nodelease.New(nodelease.Config{Min: 10 * time.Second, MaxRate: 4, Count: count})})
	return s, db, clock
}
