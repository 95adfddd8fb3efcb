package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/shoal-ml/shoal/control/loop"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// RunOnce declares nodes that missed their lease unusable (requeueing
// their work), and releases nodes that are leaving, preempted or unusable
// once they have no work. The nodes that may be due are looked at in a
// read transaction; those that need something are read again, and
// changed, in a write transaction. At 10,000 nodes, holding the single
// writer while reading them all stalled every heartbeat and submission
// for tens of milliseconds on every pass.
func (c *Loop) RunOnce(ctx context.Context, now time.Time) error {
	s := c.s
	c.mu.Lock()
	c.now = now
	if c.hearing.IsZero() {
		c.hearing = now
	}
	c.mu.Unlock()
	sys := identity.WithPrincipal(ctx, systemPrincipal)
	var due []string
	var all []*node.Node
	// Only the nodes that may be due are read (ListNodesDue): those not
	// idle or running (preparing ones are also watched, leaving,
	// preempted and unusable ones released), and those silent since
	// before the lease's cutoff. A node's silence counts from its last
	// heartbeat or from c.hearing, whichever is later (silentSince), so
	// one that missed its lease last reported before the cutoff: the set
	// holds every node loseReason, releasable and watchPreparing act on.
	// Reading every node's document for this took 16 % of a server's CPU
	// at 2,000 nodes.
	// The lease grows with the fleet (decide/nodelease): a node's
	// silence is judged by the longest lease lately granted.
	lease := s.LeaseExpiry(ctx, now)
	cutoff := now.Add(-(lease + c.cfg.NodeLeaseGrace))
	err := s.Store().View(sys, func(tx store.Tx) error {
		nodes, err := tx.ListNodesDue(cutoff)
		if err != nil {
			return err
		}
		all = nodes
		due = due[:0]
		for _, n := range nodes {
			if c.loseReason(n, now, lease) != "" || releasable(n) {
				due = append(due, n.ID)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.watchPreparing(sys, all, now)
	if len(due) == 0 {
		return nil
	}
	// A node whose loss failed waits for its retry (below).
	due = slices.DeleteFunc(due, func(id string) bool { return !c.losses.Due(id, now) })
	if len(due) == 0 {
		return nil
	}
	if err := c.settle(sys, due, now, lease); err != nil {
		// One node's failure rolled back the others': each again in a
		// transaction of its own (loop.Each), the failing one recorded,
		// retried with backoff, and the others carried out.
		items := make([]loop.Item[string], len(due))
		for i, id := range due {
			items[i] = loop.Item[string]{Key: id, Value: id}
		}
		loop.Each(c.losses, now, s.Logger(), "declaring a node lost", items,
			func(id string) error { return c.settle(sys, []string{id}, now, lease) },
			func(id string, f loop.Failure) {
				c.recordFailure(sys, id, "node_loss_failed", f.Reason("declaring node "+id+" lost"))
			})
	}
	return nil
}

// settle declares the nodes of ids that are still due lost, in one
// transaction, and releases those with no work.
func (c *Loop) settle(ctx context.Context, ids []string, now time.Time, lease time.Duration) error {
	s := c.s
	var toRelease []*node.Node
	var wake []string
	var outcomes service.JobOutcomes
	var lost []lostNode
	err := s.Store().Update(ctx, func(tx store.Tx) error {
		toRelease, wake, lost = toRelease[:0], wake[:0], lost[:0]
		outcomes.Reset()
		for _, id := range ids {
			// Read again: the node may have moved on since.
			n, err := tx.GetNode(id)
			if core.ErrorCode(err) == core.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			if reason := c.loseReason(n, now, lease); reason != "" {
				w, err := s.LoseNode(ctx, tx, n, reason, &outcomes)
				if err != nil {
					return loop.Context(err, "node %s", n.ID)
				}
				wake = append(wake, w...)
				lost = append(lost, lostNode{id: n.ID, compute: n.Workspace + "/" + n.Compute, reason: reason})
			}
			if releasable(n) {
				toRelease = append(toRelease, n)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range lost {
		// The compute's node_lost event says it too; the server's log is
		// where an operator looks first for why a job ran again or an
		// instance became unusable.
		s.Logger().Warn("node lost", slog.String("node", l.id), slog.String("compute", l.compute), slog.String("reason", l.reason))
	}
	s.Report(&outcomes)
	s.WakeNodes(wake...)
	for _, n := range toRelease {
		c.Release(ctx, n)
	}
	return nil
}

// lostNode is a node a settle declared lost, for the log once it
// committed: its ID, its compute ("workspace/name") and why.
type lostNode struct{ id, compute, reason string }

// recordFailure records, as an event on node id's compute, that
// something the loop does for the node failed (once per retry).
func (c *Loop) recordFailure(ctx context.Context, id, kind, reason string) {
	err := c.s.Store().Update(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode(id)
		if err != nil {
			return err
		}
		comp := &compute.Compute{Workspace: n.Workspace}
		comp.Name = n.Compute
		return compute.AppendComputeEvent(ctx, tx, comp, kind, reason)
	})
	if err != nil && core.ErrorCode(err) != core.ENOTFOUND {
		c.s.Logger().Warn("recording a node's failure failed", slog.String("node", id), slog.Any("err", err))
	}
}

// loseReason says why node n is to be declared lost at now, or "" when it
// is not: a machine joined by hand whose join command expired, a node that
// did not join within its provisioning delay and the join timeout, or one
// that missed its lease.
func (c *Loop) loseReason(n *node.Node, now time.Time, lease time.Duration) string {
	s := c.s
	switch {
	case n.State == node.NodePreparing && n.Role == node.NodeRoleStatic:
		// A machine joined by hand has until its join token expires: its
		// owner runs the command when they can.
		if now.After(n.JoinTokenExpires) {
			return fmt.Sprintf("node %s was not joined before its join command expired", n.ID)
		}
	case n.State == node.NodePreparing:
		delay := time.Duration(0)
		if loc, err := s.Catalog().Location(n.Location); err == nil {
			delay = loc.ProvisioningDelay
		}
		if now.Sub(n.CreatedOn) > delay+c.cfg.JoinTimeout {
			return fmt.Sprintf("node %s did not join within %s of provisioning", n.ID, delay+c.cfg.JoinTimeout)
		}
	case n.State != node.NodeUnusable && now.Sub(c.silentSince(n)) > lease+c.cfg.NodeLeaseGrace:
		return fmt.Sprintf("node %s missed its lease: no heartbeat for %s (lease %s + grace %s)",
			n.ID, now.Sub(c.silentSince(n)).Round(time.Second), lease, c.cfg.NodeLeaseGrace)
	}
	return ""
}

// silentSince is when node n's silence began, as far as the loop can
// tell: its last heartbeat, or when the loop began hearing nodes if that
// came later.
func (c *Loop) silentSince(n *node.Node) time.Time {
	c.mu.Lock()
	hearing := c.hearing
	c.mu.Unlock()
	if n.LastHeartbeat.Before(hearing) {
		return hearing
	}
	return n.LastHeartbeat
}

// releasable reports whether a node is to be released: leaving, preempted
// or unusable, with no work.
func releasable(n *node.Node) bool {
	return n.CurrentAttemptID == "" && (n.State == node.NodeLeaving || n.State == node.NodePreempted || n.State == node.NodeUnusable)
}

// Release stops a node's machine through its provider in the background,
// then removes the node; its quota is free from then on. A node already
// being released is left to that release; Wait waits for them all.
func (c *Loop) Release(ctx context.Context, n *node.Node) {
	if !c.releases.Due(n.ID, c.passNow()) {
		return // its last release failed: retried after its wait
	}
	c.mu.Lock()
	if c.releasing[n.ID] {
		c.mu.Unlock()
		return
	}
	c.releasing[n.ID] = true
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.releasing, n.ID)
			c.mu.Unlock()
		}()
		ctx := context.WithoutCancel(ctx)
		if p := c.s.ProviderFor(n.Location); p != nil {
			if err := p.Release(ctx, n); err != nil {
				// Retried after a backoff, not on every pass; logged
				// and recorded on its compute once per retry.
				f := c.releases.Failed(n.ID, c.passNow(), err)
				c.s.Logger().Warn("node release failed; will retry", slog.String("node", n.ID), slog.Int("failures", f.Count),
					slog.Time("retry_at", f.Next), slog.Any("err", err))
				c.recordFailure(ctx, n.ID, "node_release_failed", f.Reason("releasing node "+n.ID))
				return
			}
		}
		c.releases.Succeeded(n.ID)
		// freed are the computes whose queues the node's quota may now
		// serve: none when it was not removed.
		var freed []string
		err := c.s.Store().Update(ctx, func(tx store.Tx) error {
			freed = nil
			cur, err := tx.GetNode(n.ID)
			if core.ErrorCode(err) == core.ENOTFOUND {
				return nil
			} else if err != nil {
				return err
			}
			if cur.CurrentAttemptID != "" {
				return nil // it got work again meanwhile; leave it
			}
			if err := tx.DeleteNode(n.ID); err != nil {
				return err
			}
			if freed, err = quotaSharers(tx, n, c.locationName); err != nil {
				return err
			}
			comp := &compute.Compute{Workspace: n.Workspace}
			comp.Name = n.Compute
			why := n.StateReason
			if why == "" {
				why = "released"
			}
			freed := fmt.Sprintf("its %d vCPUs of quota are free", n.VCPUs)
			switch n.Role {
			case node.NodeRoleJobSlot:
				freed = "a job slot of the instance, it held no quota"
			case node.NodeRoleInstance:
				freed = "the instance keeps its quota while stopped unless release_quota_on_stop"
			}
			return compute.AppendComputeEvent(ctx, tx, comp, "node_released", fmt.Sprintf("node %s released (%s); %s", n.ID, why, freed))
		})
		if err != nil {
			c.s.Logger().Warn("node removal failed", slog.String("node", n.ID), slog.Any("err", err))
			c.s.Notify() // whatever it left, a pass over every queue sees it
			return
		}
		// A pass over the queues the freed quota may serve, not over
		// every queue: at 10,000 nodes a pass over every queue's heads
		// cost several times one over a few computes, and each release
		// asked for one.
		for _, key := range freed {
			c.s.Changed(key)
		}
	}()
}
