package autoscaler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// imageShortfall matches a cluster's queued demand by image with its idle
// and preparing nodes (NodeImages): a node serves the demand of its own
// image, and the demand of jobs that name none takes whatever nodes are
// left. It returns the image of each node still missing, in queue order,
// and the idle nodes the demand keeps from scale-down.
func imageShortfall(c *Cluster, idle, preparing []Node) ([]string, map[string]bool) {
	// Preparing nodes cover demand first: they keep idle nodes free for
	// scale-down when both could.
	spare := map[string][]Node{}
	for _, n := range preparing {
		spare[n.Image] = append(spare[n.Image], n)
	}
	for _, n := range idle {
		spare[n.Image] = append(spare[n.Image], n)
	}
	keep := map[string]bool{}
	take := func(img string) bool {
		if len(spare[img]) == 0 {
			return false
		}
		if n := spare[img][0]; n.State == NodeIdle {
			keep[n.ID] = true
		}
		spare[img] = spare[img][1:]
		return true
	}
	var missing []string
	anyDemand := 0
	for _, d := range c.ImageDemand {
		if d.Image == "" {
			anyDemand += max(d.Nodes, 0)
			continue
		}
		for range max(d.Nodes, 0) {
			if !take(d.Image) {
				missing = append(missing, d.Image)
			}
		}
	}
	// Jobs of no image take the nodes left, in image order so that the
	// choice does not depend on map order.
	left := make([]string, 0, len(spare))
	for img := range spare {
		left = append(left, img)
	}
	slices.Sort(left)
	for range anyDemand {
		i := slices.IndexFunc(left, func(img string) bool { return len(spare[img]) > 0 })
		if i < 0 {
			missing = append(missing, "")
			continue
		}
		take(left[i])
	}
	return missing, keep
}

// gangRelease releases every idle and preparing node of a cluster at once
// when a gang is queued and some node has been preparing for the gang
// timeout: Kueue's all or nothing (waitForPodsReady), so that the pods of
// a gang that cannot be complete (a pod Pending for capacity) do not hold
// their share of the cluster meanwhile. Nodes joined by hand stay.
func gangRelease(c *Cluster, now time.Time, idle, preparing []Node, live int) (Decision, bool) {
	if c.GangTimeout <= 0 || c.GangDemand < 2 {
		return Decision{}, false
	}
	var oldest *Node
	for i := range preparing {
		n := &preparing[i]
		if n.Static || n.CreatedOn.IsZero() || now.Sub(n.CreatedOn) < c.GangTimeout {
			continue
		}
		if oldest == nil || n.CreatedOn.Before(oldest.CreatedOn) {
			oldest = n
		}
	}
	if oldest == nil {
		return Decision{}, false
	}
	var ids []string
	for _, n := range slices.Concat(idle, preparing) {
		if !n.Static {
			ids = append(ids, n.ID)
		}
	}
	slices.SortFunc(ids, cmp.Compare[string])
	return Decision{
		Cluster: c.Key, Action: ActionRelease, NodeIDs: ids, From: live, To: live - len(ids), Code: ReasonGangTimeout,
		Reason: fmt.Sprintf("release %s: a gang of %d nodes did not come up whole within gang_timeout %s (%d ready, %d still preparing; %s for %s s): released together so that no part of it holds capacity",
			strings.Join(ids, ", "), c.GangDemand, roundD(c.GangTimeout), len(idle), len(preparing), oldest.ID, seconds(now.Sub(oldest.CreatedOn))),
	}, true
}
