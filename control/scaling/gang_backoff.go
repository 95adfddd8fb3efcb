package scaling

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/decide/autoscaler"
	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/store"
)

// gangHold is a cluster's run of gangs released for not coming up whole
// within its location's gang timeout.
type gangHold struct {
	count  int
	until  time.Time
	reason string // the last release's sentence
}

// gangReleased records that the autoscaler released a gang's nodes of
// cluster key at now: scale-up for it waits base (the location's gang
// backoff; a minute when unset), doubled with each release in a row, up
// to shoal.GangBackoffMax.
func (c *Loop) gangReleased(key, reason string, base time.Duration, now time.Time) {
	if base <= 0 {
		base = time.Minute
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gangHolds == nil {
		c.gangHolds = map[string]gangHold{}
	}
	h := c.gangHolds[key]
	h.count++
	d := base
	for i := 1; i < h.count && d < catalog.GangBackoffMax; i++ {
		d *= 2
	}
	h.until, h.reason = now.Add(min(d, catalog.GangBackoffMax)), reason
	c.gangHolds[key] = h
}

// holdBackGangs blocks scale-up of the clusters whose gang backoff runs
// (the autoscaler's Blocked decision says why, and the waiting job's
// reason quotes it as gang_timeout). A cluster with no gang queued any
// more ends its run: the next gang starts from the base backoff.
func (c *Loop) holdBackGangs(snap *autoscaler.Snapshot, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range snap.Clusters {
		cl := &snap.Clusters[i]
		h, ok := c.gangHolds[cl.Key]
		switch {
		case !ok:
		case cl.GangDemand < 2 && cl.QueuedNodeDemand == 0:
			delete(c.gangHolds, cl.Key)
		case now.Before(h.until):
			cl.GangHeld = fmt.Sprintf("%s; its nodes are asked for again at %s (%d gang release(s) in a row)",
				h.reason, h.until.UTC().Format(time.RFC3339), h.count)
		}
	}
}

// imageDemand fills the queued demand by image of the clusters whose
// nodes run one image each, from their whole queues (a placement pass's
// state holds only their heads); the largest gang queued comes with it.
func (c *Loop) imageDemand(ctx context.Context, snap *autoscaler.Snapshot) error {
	var todo []*autoscaler.Cluster
	for i := range snap.Clusters {
		if cl := &snap.Clusters[i]; cl.NodeImages && cl.QueuedNodeDemand > 0 {
			todo = append(todo, cl)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	return c.s.Store().View(ctx, func(tx store.Tx) error {
		for _, cl := range todo {
			ws, name, _ := strings.Cut(cl.Key, "/")
			// Demand counts nodes, so it bounds the jobs.
			refs, err := tx.ListQueueHead(ws, name, cl.QueuedNodeDemand)
			if err != nil {
				return err
			}
			at := map[string]int{}
			for _, r := range refs {
				cl.GangDemand = max(cl.GangDemand, r.InstanceCount)
				i, ok := at[r.Image]
				if !ok {
					i = len(cl.ImageDemand)
					at[r.Image] = i
					cl.ImageDemand = append(cl.ImageDemand, autoscaler.ImageDemand{Image: r.Image})
				}
				cl.ImageDemand[i].Nodes += max(r.InstanceCount, 1)
			}
		}
		return nil
	})
}
