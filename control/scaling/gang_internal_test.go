package scaling

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/catalog"
)

// A released gang holds back scale-up for the location's backoff,
// doubling with each release in a row up to the cap, and the run ends
// once no gang is queued.
func TestGangBackoff(t *testing.T) {
	c := &Loop{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := func(gang, demand int, now time.Time) autoscaler.Cluster {
		s := autoscaler.Snapshot{Clusters: []autoscaler.Cluster{{Key: "ws/k", GangDemand: gang, QueuedNodeDemand: demand}}}
		c.holdBackGangs(&s, now)
		return s.Clusters[0]
	}
	c.gangReleased("ws/k", "release k-n1, k-n2: a gang of 2 nodes did not come up whole", 10*time.Second, t0)
	if cl := snap(2, 2, t0.Add(9*time.Second)); !strings.Contains(cl.GangHeld, "a gang of 2 nodes did not come up whole; its nodes are asked for again at 2026-01-01T00:00:10Z (1 gang release(s) in a row)") {
		t.Errorf("GangHeld %q during the backoff", cl.GangHeld)
	}
	if cl := snap(2, 2, t0.Add(10*time.Second)); cl.GangHeld != "" {
		t.Errorf("GangHeld %q after the backoff; want none", cl.GangHeld)
	}
	// Released again: twice the backoff, then capped.
	c.gangReleased("ws/k", "again", 10*time.Second, t0.Add(time.Minute))
	if cl := snap(2, 2, t0.Add(time.Minute+19*time.Second)); !strings.Contains(cl.GangHeld, "00:01:20Z (2 gang release(s)") {
		t.Errorf("GangHeld %q; want a 20 s backoff", cl.GangHeld)
	}
	for range 10 {
		c.gangReleased("ws/k", "again", 10*time.Second, t0)
	}
	if h := c.gangHolds["ws/k"]; h.until != t0.Add(catalog.GangBackoffMax) {
		t.Errorf("backoff until %v; want capped at %v", h.until, catalog.GangBackoffMax)
	}
	// No gang and no demand: the run ends.
	snap(0, 0, t0)
	if _, ok := c.gangHolds["ws/k"]; ok {
		t.Error("the run of releases outlived the gang")
	}
}
