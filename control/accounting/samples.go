package accounting

import (
	"context"
	"time"

	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// SampleNodes writes the clusters' node counts that differ from the last
// ones written, from st (the nodes as a placement pass left them) or, when
// st is nil, from a read of the store.
func (c *Accounting) SampleNodes(ctx context.Context, now time.Time, st *scheduling.State) error {
	if st == nil {
		err := c.s.Store().View(ctx, func(tx store.Tx) (err error) {
			st, err = scheduling.ReadNodes(tx)
			return err
		})
		if err != nil {
			return err
		}
	}
	var due []*node.NodeSample
	c.mu.Lock()
	if c.samples == nil {
		c.samples = map[string]*node.NodeSample{}
	}
	known := make(map[string]*node.NodeSample, len(c.samples))
	for k, v := range c.samples {
		known[k] = v
	}
	c.mu.Unlock()
	for key, ci := range st.Clusters {
		comp := ci.Compute
		if comp.IsInstance() {
			continue
		}
		s := &node.NodeSample{Workspace: comp.Workspace, Compute: comp.Name, Time: now, Size: comp.Size, Tier: comp.Tier}
		for _, n := range ci.Nodes {
			switch n.State {
			case node.NodePreparing:
				s.Preparing++
			case node.NodeIdle:
				s.Idle++
			case node.NodeRunning:
				s.Running++
			case node.NodeLeaving:
				s.Leaving++
			case node.NodeUnusable:
				s.Unusable++
			case node.NodePreempted:
				s.Preempted++
			}
		}
		last, ok := known[key]
		if !ok {
			// First look since this controller started: the store says
			// what was written last (by this server or another).
			err := c.s.Store().View(ctx, func(tx store.Tx) error {
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
		case !s.SameCounts(last), s.Billed() > 0 && now.Sub(last.Time) >= node.NodeSampleInterval:
			due = append(due, s)
			last = s
		}
		known[key] = last
	}
	prune := now.Sub(c.lastPrune) >= time.Hour
	if len(due) > 0 || prune {
		err := c.s.Store().Update(ctx, func(tx store.Tx) error {
			for _, s := range due {
				if err := tx.InsertNodeSample(s); err != nil {
					return err
				}
			}
			if prune {
				_, err := tx.DeleteNodeSamplesBefore(now.Add(-node.NodeSampleRetention))
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
