package agentapi

import (
	"fmt"
	"testing"
	"time"
)

// Entries live for credCacheTTL; a full cache drops expired entries first
// and keeps fresh ones.
func TestCredCache(t *testing.T) {
	var c credCache
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c.put("h", "n1", t0)
	if id, ok := c.get("h", t0.Add(credCacheTTL)); !ok || id != "n1" {
		t.Fatalf("within the TTL: %q %v", id, ok)
	}
	if _, ok := c.get("h", t0.Add(credCacheTTL+time.Millisecond)); ok {
		t.Fatal("trusted past the TTL")
	}
	for i := range credCacheMax - 1 {
		c.put(fmt.Sprint(i), "old", t0)
	}
	later := t0.Add(2 * credCacheTTL)
	c.put("fresh", "n2", later)
	c.put("fresher", "n3", later)
	if len(c.m) != 2 {
		t.Fatalf("%d entries after the sweep, want the 2 fresh ones", len(c.m))
	}
	if id, ok := c.get("fresh", later); !ok || id != "n2" {
		t.Fatalf("fresh entry lost: %q %v", id, ok)
	}
}

// A node's new credential (its revived agent joined) retires the old one at
// once, within the TTL.
func TestCredCacheRetiresReplacedCredential(t *testing.T) {
	var c credCache
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c.put("old", "n1", t0)
	c.put("new", "n1", t0.Add(time.Second))
	if _, ok := c.get("old", t0.Add(2*time.Second)); ok {
		t.Error("the replaced credential is still trusted")
	}
	if id, ok := c.get("new", t0.Add(2*time.Second)); !ok || id != "n1" {
		t.Errorf("the new credential: %q %v", id, ok)
	}
}
