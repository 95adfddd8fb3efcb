package service

import (
	"context"
	"slices"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Node samples (shoal.NodeSample) are each cluster's node counts by state
// over time, for the studio's chart and its cost so far. The controller
// samples on every full pass and writes only what changed, or every
// NodeSampleInterval while a cluster has nodes; it prunes once an hour.

// NodeHistory returns a cluster's node samples since a time (the one in
// force at since first), of its present lifetime only: the samples of an
// earlier compute of that name, deleted, end before its creation and are
// left out (a new cluster's cost starts at zero, not at the old one's last
// sample).
func (s *Services) NodeHistory(ctx context.Context, workspace, compute string, since time.Time) (out []*node.NodeSample, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		out, err = tx.ListNodeSamples(workspace, compute, since)
		if err != nil {
			return err
		}
		if c, gerr := tx.GetCompute(workspace, compute); gerr == nil {
			out = slices.DeleteFunc(out, func(x *node.NodeSample) bool { return x.Time.Before(c.CreatedOn) })
		}
		return nil
	})
	return out, err
}

// Cost is what a cluster's nodes cost from its first sample to now, from
// the catalog's hourly prices: node-hours and money by tier.
type Cost struct {
	NodeHours   float64   `json:"node_hours"`
	USD         float64   `json:"usd"`
	Dedicated   float64   `json:"dedicated_usd"`
	LowPriority float64   `json:"low_priority_usd"`
	Since       time.Time `json:"since"`
}

// ClusterCost integrates a cluster's samples: each sample's billed nodes
// times its size's price on its tier, until the next sample (or now).
func (s *Services) ClusterCost(samples []*node.NodeSample, now time.Time) Cost {
	var c Cost
	for i, x := range samples {
		end := now
		if i+1 < len(samples) {
			end = samples[i+1].Time
		}
		if i == 0 {
			c.Since = x.Time
		}
		h := end.Sub(x.Time).Hours() * float64(x.Billed())
		if h <= 0 {
			continue
		}
		c.NodeHours += h
		size, ok := s.catalog.Size(x.Size)
		if !ok {
			continue
		}
		if x.Tier == compute.TierLowPriority {
			c.LowPriority += h * size.LowPriorityPricePerHour
		} else {
			c.Dedicated += h * size.PricePerHour
		}
	}
	c.USD = c.Dedicated + c.LowPriority
	return c
}
