package nodes

import (
	"context"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// watchEvery is how often a preparing node's provider is asked about it
// (one API call per node: the cluster's API is not to be hammered).
const watchEvery = 2 * time.Second

// watchPreparing asks the providers that place their machines through
// another scheduler (shoal.NodeWatcher: kubernetes) about the nodes still
// preparing: a node waiting for capacity gets the provider's reason as
// its state reason, which `compute list-nodes` and the waiting job show;
// a machine taken back is a preempted node; one that ended before its
// agent joined is lost.
func (c *Loop) watchPreparing(ctx context.Context, nodes []*node.Node, now time.Time) {
	type seen struct {
		node *node.Node
		st   node.ProviderNodeStatus
	}
	var todo []seen
	c.mu.Lock()
	if c.watched == nil {
		c.watched = map[string]time.Time{}
	}
	c.mu.Unlock()
	for _, n := range nodes {
		if n.State != node.NodePreparing || n.ProviderRef == "" || n.Role == node.NodeRoleStatic {
			continue
		}
		w, ok := c.s.ProviderFor(n.Location).(node.NodeWatcher)
		if !ok {
			continue
		}
		c.mu.Lock()
		last := c.watched[n.ID]
		due := now.Sub(last) >= watchEvery
		if due {
			c.watched[n.ID] = now
		}
		c.mu.Unlock()
		if !due {
			continue
		}
		st, err := w.NodeStatus(ctx, n)
		if err != nil {
			c.s.Logger().Warn("asking the provider about a preparing node failed", slog.String("node", n.ID), slog.Any("err", err))
			continue
		}
		if st.Preempted || st.Ended || st.Waiting != n.StateReason {
			todo = append(todo, seen{n, st})
		}
	}
	c.forget(nodes)
	for _, t := range todo {
		n, st := t.node, t.st
		if st.Preempted {
			if err := c.s.PreemptNodeBecause(ctx, n.Workspace, n.Compute, n.ID, "taken back by its provider: "+st.Reason); err != nil && core.ErrorCode(err) != core.ECONFLICT && core.ErrorCode(err) != core.ENOTFOUND {
				c.s.Logger().Warn("preempting a node its provider took back failed", slog.String("node", n.ID), slog.Any("err", err))
			}
			continue
		}
		var wake []string
		var outcomes service.JobOutcomes
		err := c.s.Store().Update(ctx, func(tx store.Tx) error {
			wake = wake[:0]
			outcomes.Reset()
			cur, err := tx.GetNode(n.ID)
			if err != nil || cur.State != node.NodePreparing {
				return err // it joined, or went, meanwhile
			}
			if st.Ended {
				wake, err = c.s.LoseNode(ctx, tx, cur, "node "+n.ID+" ended before its agent joined: "+st.Reason, &outcomes)
				return err
			}
			cur.StateReason = st.Waiting
			cur.Version++
			return tx.UpdateNode(cur)
		})
		if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
			c.s.Logger().Warn("recording a preparing node's status failed", slog.String("node", n.ID), slog.Any("err", err))
			continue
		}
		c.s.Report(&outcomes)
		c.s.WakeNodes(wake...)
		c.s.Notify()
	}
}

// forget drops the watch times of nodes no longer preparing.
func (c *Loop) forget(nodes []*node.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.watched) == 0 {
		return
	}
	preparing := make(map[string]bool, len(c.watched))
	for _, n := range nodes {
		if n.State == node.NodePreparing {
			preparing[n.ID] = true
		}
	}
	for id := range c.watched {
		if !preparing[id] {
			delete(c.watched, id)
		}
	}
}
