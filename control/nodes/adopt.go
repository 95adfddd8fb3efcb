package nodes

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	nodekind "github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service"
	"github.com/shoal-ml/shoal/store"
)

// ResetLeases gives every node a fresh lease. The server calls it on start:
// agents kept running while it was down and need a full lease period to
// report back before any of them is declared lost.
func (c *Loop) ResetLeases(ctx context.Context) error {
	s := c.s
	// The next pass starts hearing nodes afresh (a replica that just
	// became the leader resets here too).
	c.mu.Lock()
	c.hearing = time.Time{}
	c.mu.Unlock()
	return s.Store().Update(ctx, func(tx store.Tx) error {
		nodes, err := tx.ListNodes(nodekind.NodeFilter{})
		if err != nil {
			return err
		}
		for _, n := range nodes {
			n.LastHeartbeat = tx.Now()
			if n.State == nodekind.NodePreparing {
				// A node still joining gets at least a lease to do so after
				// the restart, but its join timeout does not start over: a
				// server restarted more often than that timeout would
				// otherwise wait forever for a node that never joins.
				delay := time.Duration(0)
				if loc, err := s.Catalog().Location(n.Location); err == nil {
					delay = loc.ProvisioningDelay
				}
				if least := tx.Now().Add(-(delay + c.cfg.JoinTimeout) + c.cfg.NodeLeaseTTL + c.cfg.NodeLeaseGrace); n.CreatedOn.Before(least) {
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

// AdoptNodes runs after a server restart: nodes whose machines still exist
// (agents that kept running) are adopted as they are. A node whose agent
// is gone but that still holds work — its agent may have exited while the
// server was away, keeping the results of finished jobs in its work dir —
// is revived when its provider can (a new agent on the same machine and
// work dir reports those results); any other node whose machine is gone
// is declared lost at once rather than after a lease. It returns how many
// nodes were adopted or revived.
func (c *Loop) AdoptNodes(ctx context.Context) (int, error) {
	s := c.s
	var nodes []*nodekind.Node
	err := s.Store().View(ctx, func(tx store.Tx) error {
		var err error
		nodes, err = tx.ListNodes(nodekind.NodeFilter{})
		return err
	})
	if err != nil {
		return 0, err
	}
	adopted := 0
	var gone []*nodekind.Node
	for _, n := range nodes {
		p := s.ProviderFor(n.Location)
		if p != nil && n.ProviderRef == "" && n.State == nodekind.NodePreparing && n.Role == "" {
			// A cluster node recorded but never handed to its provider (or
			// whose provider's answer was never recorded): the server died
			// in between. Nothing will join it; the autoscaler asks for a
			// new one. An agent started meanwhile is refused at its join
			// and exits.
			gone = append(gone, n)
			continue
		}
		if p == nil || n.ProviderRef == "" || n.State == nodekind.NodeUnusable {
			continue
		}
		alive, err := p.Alive(ctx, n)
		if err != nil {
			s.Logger().Warn("cannot tell whether a node is alive", slog.String("node", n.ID), slog.Any("err", err))
			continue
		}
		switch {
		case alive:
			adopted++
		case (n.CurrentAttemptID != "" || n.Role == nodekind.NodeRoleInstance) && c.reviveNode(ctx, p, n) == nil:
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
	sys := identity.WithPrincipal(ctx, systemPrincipal)
	var wake []string
	var outcomes service.JobOutcomes
	err = s.Store().Update(sys, func(tx store.Tx) error {
		wake = wake[:0]
		outcomes.Reset()
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
			w, err := s.LoseNode(sys, tx, n, reason, &outcomes)
			if err != nil {
				return err
			}
			wake = append(wake, w...)
		}
		return nil
	})
	if err == nil {
		s.Report(&outcomes)
	}
	s.WakeNodes(wake...)
	return adopted, err
}

// revivedWork says what a revived node's new agent picks up.
func revivedWork(n *nodekind.Node) string {
	if n.CurrentJobName != "" {
		return " and reports what it kept of job " + n.CurrentJobName
	}
	if n.Role == nodekind.NodeRoleInstance {
		return " and serves compute instance " + n.Compute + " again"
	}
	return ""
}

// reviveNode gives a node whose agent is gone a new join token and asks
// its provider for a new agent on the same work dir. The node keeps its
// assignment: the new agent reports the result its predecessor kept, or,
// when there is none, the node misses its lease and the work is requeued
// as for any lost node.
func (c *Loop) reviveNode(ctx context.Context, p nodekind.Provider, n *nodekind.Node) error {
	s := c.s
	rv, ok := p.(nodekind.Reviver)
	if !ok {
		return core.Errorf(core.ENOTIMPLEMENTED, "provider %s cannot revive nodes", p.Name())
	}
	token, hash, err := identity.NewToken()
	if err != nil {
		return err
	}
	sys := identity.WithPrincipal(ctx, systemPrincipal)
	var node *nodekind.Node
	err = s.Store().Update(sys, func(tx store.Tx) error {
		cur, err := tx.GetNode(n.ID)
		if err != nil {
			return err
		}
		now := tx.Now()
		cur.JoinTokenHash, cur.JoinTokenExpires = hash, now.Add(c.cfg.JoinTimeout)
		cur.LastHeartbeat = now // a full lease to join and report
		cur.Version++
		if err := tx.UpdateNode(cur); err != nil {
			return err
		}
		node = cur
		c := &compute.Compute{Workspace: cur.Workspace}
		c.Name = cur.Compute
		return compute.AppendComputeEvent(sys, tx, c, "node_revived",
			fmt.Sprintf("node %s: its agent had exited while the server was away; a new agent on the same work dir takes over%s", cur.ID, revivedWork(cur)))
	})
	if err != nil {
		return err
	}
	if err := rv.Revive(ctx, nodekind.ProvisionRequest{Node: node, JoinToken: token, ServerURL: c.cfg.ServerURL, ServerCA: c.cfg.ServerCA, Image: node.Image}); err != nil {
		s.Logger().Warn("reviving a node failed", slog.String("node", n.ID), slog.Any("err", err))
		return err
	}
	s.Logger().Info("node revived", slog.String("node", n.ID), slog.String("job", n.CurrentJobName))
	return nil
}
