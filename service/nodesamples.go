package service

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal"
)

// Node samples (shoal.NodeSample) are each cluster's node counts by state
// over time, for the studio's chart and its cost so far. The controller
// samples on every full pass and writes only what changed, or every
// NodeSampleInterval while a cluster has nodes; it prunes once an hour.

// sampleNodes writes the clusters' node counts that differ from the last
// ones written.
func (c *Controller) sampleNodes(ctx context.Context, now time.Time) error {
	// The nodes as this pass's placement left them, when it read them;
	// else read.
	c.mu.Lock()
	st := c.passNodes
	c.passNodes = nil
	c.mu.Unlock()
	if st == nil {
		err := c.s.store.View(ctx, func(tx shoal.Tx) (err error) {
			st, err = readNodes(tx)
			return err
		})
		if err != nil {
			return err
		}
	}
	var due []*shoal.NodeSample
	c.mu.Lock()
	if c.samples == nil {
		c.samples = map[string]*shoal.NodeSample{}
	}
	known := make(map[string]*shoal.NodeSample, len(c.samples))
	for k, v := range c.samples {
		known[k] = v
	}
	c.mu.Unlock()
	for key, ci := range st.clusters {
		comp := ci.compute
		if comp.IsInstance() {
			continue
		}
		s := &shoal.NodeSample{Workspace: comp.Workspace, Compute: comp.Name, Time: now, Size: comp.Size, Tier: comp.Tier}
		for _, n := range ci.nodes {
			switch n.State {
			case shoal.NodePreparing:
				s.Preparing++
			case shoal.NodeIdle:
				s.Idle++
			case shoal.NodeRunning:
				s.Running++
			case shoal.NodeLeaving:
				s.Leaving++
			case shoal.NodeUnusable:
				s.Unusable++
			case shoal.NodePreempted:
				s.Preempted++
			}
		}
		last, ok := known[key]
		if !ok {
			// First look since this controller started: the store says
			// what was written last (by this server or another).
			err := c.s.store.View(ctx, func(tx shoal.Tx) error {
				l, err := tx.ListNodeSamples(comp.Workspace, comp.Name, now)
				if err == nil && len(l) > 0 {
					last = l[len(l)-1]
				}
				return err
			})
			if err != nil {
				return err
			}
		}
		switch {
		case last == nil && s.Billed()+s.Preempted == 0:
			// Nothing ever ran: no history to start.
		case !s.SameCounts(last), s.Billed() > 0 && now.Sub(last.Time) >= shoal.NodeSampleInterval:
			due = append(due, s)
			last = s
		}
		known[key] = last
	}
	prune := now.Sub(c.lastPrune) >= time.Hour
	if len(due) > 0 || prune {
		err := c.s.store.Update(ctx, func(tx shoal.Tx) error {
			for _, s := range due {
				if err := tx.InsertNodeSample(s); err != nil {
					return err
				}
			}
			if prune {
				_, err := tx.DeleteNodeSamplesBefore(now.Add(-shoal.NodeSampleRetention))
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.samples = known
	if prune {
		c.lastPrune = now
	}
	c.mu.Unlock()
	return nil
}

// NodeHistory returns a cluster's node samples since a time (the one in
// force at since first).
func (s *Services) NodeHistory(ctx context.Context, workspace, compute string, since time.Time) (out []*shoal.NodeSample, err error) {
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		out, err = tx.ListNodeSamples(workspace, compute, since)
		return err
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
func (s *Services) ClusterCost(samples []*shoal.NodeSample, now time.Time) Cost {
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
		if x.Tier == shoal.TierLowPriority {
			c.LowPriority += h * size.LowPriorityPricePerHour
		} else {
			c.Dedicated += h * size.PricePerHour
		}
	}
	c.USD = c.Dedicated + c.LowPriority
	return c
}
