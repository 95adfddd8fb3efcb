package service

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/shoal-ml/shoal"
)

// ResetLeases gives every node a fresh lease. The server calls it on start:
// agents kept running while it was down and need a full lease period to
// report back before any of them is declared lost.
func (s *Services) ResetLeases(ctx context.Context) error {
	return s.store.Update(ctx, func(tx shoal.Tx) error {
		nodes, err := tx.ListNodes(shoal.NodeFilter{})
		if err != nil {
			return err
		}
		for _, n := range nodes {
			n.LastHeartbeat = tx.Now()
			if n.State == shoal.NodePreparing {
				// A node still joining gets at least a lease to do so after
				// the restart, but its join timeout does not start over: a
				// server restarted more often than that timeout would
				// otherwise wait forever for a node that never joins.
				delay := time.Duration(0)
				if loc, err := s.catalog.Location(n.Location); err == nil {
					delay = loc.ProvisioningDelay
				}
				if least := tx.Now().Add(-(delay + s.cfg.JoinTimeout) + s.cfg.NodeLeaseTTL + s.cfg.NodeLeaseGrace); n.CreatedOn.Before(least) {
					n.CreatedOn = least
				}
			}
			if err := tx.UpdateNode(n); err != nil {
				return err
			}
		}
		return nil
	})
}

// systemPrincipal is who the node lifecycle, reconciliation and the
// agent protocol's own repairs act as (the scheduler and the autoscaler
// have principals of their own, placement.go and scale.go).
var systemPrincipal = shoal.SystemPrincipal("system")

// lifecycle declares nodes that missed their lease unusable (requeueing
// their work), and releases nodes that are leaving, preempted or unusable
// once they have no work. The nodes are looked at in a read transaction;
// only those that need something are read again, and changed, in a write
// transaction. At 10,000 nodes, holding the single writer while reading
// them all stalled every heartbeat and submission for tens of
// milliseconds on every pass.
func (c *Controller) lifecycle(ctx context.Context, now time.Time) error {
	s := c.s
	sys := shoal.WithPrincipal(ctx, systemPrincipal)
	var due []string
	err := s.store.View(sys, func(tx shoal.Tx) error {
		nodes, err := tx.ListNodes(shoal.NodeFilter{})
		if err != nil {
			return err
		}
		due = due[:0]
		for _, n := range nodes {
			if c.loseReason(n, now) != "" || releasable(n) {
				due = append(due, n.ID)
			}
		}
		return nil
	})
	if err != nil || len(due) == 0 {
		return err
	}
	var toRelease []*shoal.Node
	var wake []string
	var outcomes jobOutcomes
	err = s.store.Update(sys, func(tx shoal.Tx) error {
		toRelease, wake = toRelease[:0], wake[:0]
		outcomes.reset()
		for _, id := range due {
			// Read again: the node may have moved on since.
			n, err := tx.GetNode(id)
			if shoal.ErrorCode(err) == shoal.ENOTFOUND {
				continue
			} else if err != nil {
				return err
			}
			if reason := c.loseReason(n, now); reason != "" {
				w, err := s.loseNode(sys, tx, n, reason, &outcomes)
				if err != nil {
					return err
				}
				wake = append(wake, w...)
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
	s.report(&outcomes)
	s.nodes.wake(wake...)
	for _, n := range toRelease {
		c.release(sys, n)
	}
	return nil
}

// loseReason says why node n is to be declared lost at now, or "" when it
// is not: a machine joined by hand whose join command expired, a node that
// did not join within its provisioning delay and the join timeout, or one
// that missed its lease.
func (c *Controller) loseReason(n *shoal.Node, now time.Time) string {
	s := c.s
	switch {
	case n.State == shoal.NodePreparing && n.Role == shoal.NodeRoleStatic:
		// A machine joined by hand has until its join token expires: its
		// owner runs the command when they can.
		if now.After(n.JoinTokenExpires) {
			return fmt.Sprintf("node %s was not joined before its join command expired", n.ID)
		}
	case n.State == shoal.NodePreparing:
		delay := time.Duration(0)
		if loc, err := s.catalog.Location(n.Location); err == nil {
			delay = loc.ProvisioningDelay
		}
		if now.Sub(n.CreatedOn) > delay+s.cfg.JoinTimeout {
			return fmt.Sprintf("node %s did not join within %s of provisioning", n.ID, delay+s.cfg.JoinTimeout)
		}
	case n.State != shoal.NodeUnusable && now.Sub(n.LastHeartbeat) > s.cfg.NodeLeaseTTL+s.cfg.NodeLeaseGrace:
		return fmt.Sprintf("node %s missed its lease: no heartbeat for %s (lease %s + grace %s)",
			n.ID, now.Sub(n.LastHeartbeat).Round(time.Second), s.cfg.NodeLeaseTTL, s.cfg.NodeLeaseGrace)
	}
	return ""
}

// releasable reports whether a node is to be released: leaving, preempted
// or unusable, with no work.
func releasable(n *shoal.Node) bool {
	return n.CurrentAttemptID == "" && (n.State == shoal.NodeLeaving || n.State == shoal.NodePreempted || n.State == shoal.NodeUnusable)
}

// loseNode marks a node unusable and ends its rank as Lost, which requeues
// the job once every rank of the attempt has ended (or fails it, past
// MaxInfraRequeues, or cancels it when a cancel was requested): what it
// does to the job goes into outcomes, for the metrics.
func (s *Services) loseNode(ctx context.Context, tx shoal.Tx, n *shoal.Node, reason string, outcomes *jobOutcomes) ([]string, error) {
	var wake []string
	attemptID, rank := n.CurrentAttemptID, n.CurrentRank
	n.State, n.StateReason, n.Draining = shoal.NodeUnusable, reason, true
	n.CurrentAttemptID, n.CurrentJobName = "", ""
	n.Version++
	if err := tx.UpdateNode(n); err != nil {
		return nil, err
	}
	c := &shoal.Compute{Workspace: n.Workspace}
	c.Name = n.Compute
	if err := appendComputeEvent(ctx, tx, c, "node_lost", reason); err != nil {
		return nil, err
	}
	if attemptID == "" {
		return nil, nil
	}
	a, err := tx.GetAttempt(attemptID)
	if err != nil {
		return nil, err
	}
	j, err := tx.GetJob(a.Workspace, a.JobName)
	if err != nil {
		return nil, err
	}
	rs := a.Ranks[rank]
	if shoal.AttemptTerminal(rs.Status) || j.CurrentAttemptID != a.ID {
		return nil, nil
	}
	before := markOf(j)
	now := tx.Now()
	rs.Status, rs.EndTime, rs.Reason = shoal.AttemptLost, &now, reason
	if !shoal.AttemptTerminal(a.Status) {
		a.Status, a.Reason = shoal.AttemptLost, reason
	}
	for _, r := range a.Ranks {
		if !shoal.AttemptTerminal(r.Status) {
			wake = append(wake, r.NodeID)
		}
	}
	if allRanks(a, func(r *shoal.RankStatus) bool { return shoal.AttemptTerminal(r.Status) }) {
		if err := s.finalizeAttempt(ctx, tx, j, a); err != nil {
			return nil, err
		}
	}
	if err := tx.UpdateAttempt(a); err != nil {
		return nil, err
	}
	j.Version++
	if err := tx.UpdateJob(j); err != nil {
		return nil, err
	}
	outcomes.note(before, j)
	return wake, nil
}

// release stops a node's machine through its provider in the background,
// then removes the node; its quota is free from then on.
func (c *Controller) release(ctx context.Context, n *shoal.Node) {
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
		if p := c.s.providerFor(n.Location); p != nil {
			if err := p.Release(ctx, n); err != nil {
				c.s.log.Warn("node release failed; will retry", slog.String("node", n.ID), slog.Any("err", err))
				return
			}
		}
		err := c.s.store.Update(ctx, func(tx shoal.Tx) error {
			cur, err := tx.GetNode(n.ID)
			if shoal.ErrorCode(err) == shoal.ENOTFOUND {
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
			comp := &shoal.Compute{Workspace: n.Workspace}
			comp.Name = n.Compute
			why := n.StateReason
			if why == "" {
				why = "released"
			}
			freed := fmt.Sprintf("its %d vCPUs of quota are free", n.VCPUs)
			switch n.Role {
			case shoal.NodeRoleJobSlot:
				freed = "a job slot of the instance, it held no quota"
			case shoal.NodeRoleInstance:
				freed = "the instance keeps its quota while stopped unless release_quota_on_stop"
			}
			return appendComputeEvent(ctx, tx, comp, "node_released", fmt.Sprintf("node %s released (%s); %s", n.ID, why, freed))
		})
		if err != nil {
			c.s.log.Warn("node removal failed", slog.String("node", n.ID), slog.Any("err", err))
		}
		c.s.notify()
	}()
}

// providerFor returns the provider of a location, or nil.
func (s *Services) providerFor(location string) shoal.Provider {
	loc, err := s.catalog.Location(location)
	if err != nil {
		return nil
	}
	return s.provider(loc)
}

// provider returns a location's provider: its own (an ssh pool is one
// location's), else the one its provider name names (local), or nil.
func (s *Services) provider(loc *shoal.Location) shoal.Provider {
	if p, ok := s.cfg.Providers[loc.Name]; ok {
		return p
	}
	return s.cfg.Providers[loc.Provider]
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// AdoptNodes runs after a server restart: nodes whose machines still exist
// (agents that kept running) are adopted as they are. A node whose agent
// is gone but that still holds work — its agent may have exited while the
// server was away, keeping the results of finished jobs in its work dir —
// is revived when its provider can (a new agent on the same machine and
// work dir reports those results); any other node whose machine is gone
// is declared lost at once rather than after a lease. It returns how many
// nodes were adopted or revived.
func (s *Services) AdoptNodes(ctx context.Context) (int, error) {
	var nodes []*shoal.Node
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		var err error
		nodes, err = tx.ListNodes(shoal.NodeFilter{})
		return err
	})
	if err != nil {
		return 0, err
	}
	adopted := 0
	var gone []*shoal.Node
	for _, n := range nodes {
		p := s.providerFor(n.Location)
		if p != nil && n.ProviderRef == "" && n.State == shoal.NodePreparing && n.Role == "" {
			// A cluster node recorded but never handed to its provider (or
			// whose provider's answer was never recorded): the server died
			// in between. Nothing will join it; the autoscaler asks for a
			// new one. An agent started meanwhile is refused at its join
			// and exits.
			gone = append(gone, n)
			continue
		}
		if p == nil || n.ProviderRef == "" || n.State == shoal.NodeUnusable {
			continue
		}
		alive, err := p.Alive(ctx, n)
		if err != nil {
			s.log.Warn("cannot tell whether a node is alive", slog.String("node", n.ID), slog.Any("err", err))
			continue
		}
		switch {
		case alive:
			adopted++
		case (n.CurrentAttemptID != "" || n.Role == shoal.NodeRoleInstance) && s.reviveNode(ctx, p, n) == nil:
			// A node with work, or a compute instance's own node (its
			// user's home and applications), comes back on its work dir.
			adopted++
		default:
			gone = append(gone, n)
		}
	}
	if len(gone) == 0 {
		return adopted, nil
	}
	sys := shoal.WithPrincipal(ctx, systemPrincipal)
	var wake []string
	var outcomes jobOutcomes
	err = s.store.Update(sys, func(tx shoal.Tx) error {
		wake = wake[:0]
		outcomes.reset()
		for _, g := range gone {
			n, err := tx.GetNode(g.ID)
			if err != nil || n.State != g.State || n.ProviderRef != g.ProviderRef || n.CredentialHash != g.CredentialHash ||
				n.LastHeartbeat.After(g.LastHeartbeat) {
				// Released, or changed since it was looked at (its
				// provider's answer recorded, its agent joined or
				// heartbeating): what was decided about it no longer
				// holds, and its lease decides instead.
				continue
			}
			reason := fmt.Sprintf("node %s: its machine is gone (found after a server restart)", n.ID)
			if g.ProviderRef == "" {
				reason = fmt.Sprintf("node %s: its provisioning was interrupted by a server restart", n.ID)
			}
			w, err := s.loseNode(sys, tx, n, reason, &outcomes)
			if err != nil {
				return err
			}
			wake = append(wake, w...)
		}
		return nil
	})
	if err == nil {
		s.report(&outcomes)
	}
	s.nodes.wake(wake...)
	return adopted, err
}

// revivedWork says what a revived node's new agent picks up.
func revivedWork(n *shoal.Node) string {
	if n.CurrentJobName != "" {
		return " and reports what it kept of job " + n.CurrentJobName
	}
	if n.Role == shoal.NodeRoleInstance {
		return " and serves compute instance " + n.Compute + " again"
	}
	return ""
}

// reviveNode gives a node whose agent is gone a new join token and asks
// its provider for a new agent on the same work dir. The node keeps its
// assignment: the new agent reports the result its predecessor kept, or,
// when there is none, the node misses its lease and the work is requeued
// as for any lost node.
func (s *Services) reviveNode(ctx context.Context, p shoal.Provider, n *shoal.Node) error {
	rv, ok := p.(shoal.Reviver)
	if !ok {
		return shoal.Errorf(shoal.ENOTIMPLEMENTED, "provider %s cannot revive nodes", p.Name())
	}
	token, hash, err := shoal.NewToken()
	if err != nil {
		return err
	}
	sys := shoal.WithPrincipal(ctx, systemPrincipal)
	var node *shoal.Node
	err = s.store.Update(sys, func(tx shoal.Tx) error {
		cur, err := tx.GetNode(n.ID)
		if err != nil {
			return err
		}
		now := tx.Now()
		cur.JoinTokenHash, cur.JoinTokenExpires = hash, now.Add(s.cfg.JoinTimeout)
		cur.LastHeartbeat = now // a full lease to join and report
		cur.Version++
		if err := tx.UpdateNode(cur); err != nil {
			return err
		}
		node = cur
		c := &shoal.Compute{Workspace: cur.Workspace}
		c.Name = cur.Compute
		return appendComputeEvent(sys, tx, c, "node_revived",
			fmt.Sprintf("node %s: its agent had exited while the server was away; a new agent on the same work dir takes over%s", cur.ID, revivedWork(cur)))
	})
	if err != nil {
		return err
	}
	if err := rv.Revive(ctx, shoal.ProvisionRequest{Node: node, JoinToken: token, ServerURL: s.cfg.ServerURL, ServerCA: s.cfg.ServerCA}); err != nil {
		s.log.Warn("reviving a node failed", slog.String("node", n.ID), slog.Any("err", err))
		return err
	}
	s.log.Info("node revived", slog.String("node", n.ID), slog.String("job", n.CurrentJobName))
	return nil
}
