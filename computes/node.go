package computes

import (
	"context"
	"fmt"

	"github.com/shoal-ml/shoal"
)

// ListNodes returns the nodes of a compute, as `list-nodes` shows them.
func (s *Service) ListNodes(ctx context.Context, workspace, compute string) (out []*shoal.Node, err error) {
	err = s.store.View(ctx, func(tx shoal.Tx) error {
		c, err := s.getCompute(tx, workspace, compute)
		if err != nil {
			return err
		}
		out, err = tx.ListNodes(shoal.NodeFilter{Workspace: c.Workspace, Compute: c.Name})
		return err
	})
	if out == nil {
		out = []*shoal.Node{}
	}
	return out, err
}

// PreemptNode takes a node back as a cloud evicts low-priority capacity: its
// work is stopped and requeued without spending the job's retry budget,
// and the node goes away.
func (s *Service) PreemptNode(ctx context.Context, workspace, compute, nodeID string) (*shoal.Node, error) {
	if err := s.PreemptNodeBecause(ctx, workspace, compute, nodeID, "preempted on request by "+shoal.ActorName(ctx)); err != nil {
		return nil, err
	}
	var n *shoal.Node
	err := s.store.View(ctx, func(tx shoal.Tx) error {
		var err error
		n, err = tx.GetNode(nodeID)
		return err
	})
	return n, err
}

// PreemptNodeBecause evicts a node as its provider would reclaim it,
// with reason (the simulated preemption of the control loops).
func (s *Service) PreemptNodeBecause(ctx context.Context, workspace, compute, nodeID, reason string) error {
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		c, n, err := s.computeNode(tx, workspace, compute, nodeID)
		if err != nil {
			return err
		}
		if n.State == shoal.NodePreempted || n.State == shoal.NodeLeaving || n.State == shoal.NodeUnusable {
			return shoal.Errorf(shoal.ECONFLICT, "node %s is already %s", n.ID, n.State)
		}
		return MarkPreempted(ctx, tx, c, n, reason)
	})
	if err != nil {
		return err
	}
	s.cfg.Wake(nodeID)
	s.notify()
	return nil
}

// MarkPreempted records that node n of compute c was taken back.
func MarkPreempted(ctx context.Context, tx shoal.Tx, c *shoal.Compute, n *shoal.Node, reason string) error {
	n.State, n.StateReason, n.Draining = shoal.NodePreempted, reason, true
	n.Version++
	if err := tx.UpdateNode(n); err != nil {
		return err
	}
	detail := reason
	if n.CurrentJobName != "" {
		detail += fmt.Sprintf("; job %s will be requeued", n.CurrentJobName)
	}
	return shoal.AppendComputeEvent(ctx, tx, c, shoal.EventPreempted, fmt.Sprintf("node %s: %s", n.ID, detail))
}

// NodeLeaving records an agent's notice that its machine is being taken
// back (a Slurm pilot preempted, cancelled or at its time limit): the node
// is preempted, as a cloud's low-priority node would be. A node already
// leaving, preempted or lost is left as it is; a node Shoal itself is
// releasing gets the notice because Shoal cancelled it.
func (s *Service) NodeLeaving(ctx context.Context, nodeID, why string) error {
	changed := false
	err := s.store.Update(ctx, func(tx shoal.Tx) error {
		n, err := tx.GetNode(nodeID)
		if shoal.ErrorCode(err) == shoal.ENOTFOUND {
			return nil
		} else if err != nil {
			return err
		}
		if n.State == shoal.NodePreempted || n.State == shoal.NodeLeaving || n.State == shoal.NodeUnusable {
			return nil
		}
		c, err := tx.GetCompute(n.Workspace, n.Compute)
		if err != nil {
			return err
		}
		changed = true
		return MarkPreempted(shoal.WithPrincipal(ctx, shoal.NodePrincipal(n)), tx, c, n, "taken back by its provider: "+why)
	})
	if err != nil || !changed {
		return err
	}
	s.cfg.Wake(nodeID)
	s.notify()
	return nil
}

// computeNode reads a compute and one of its nodes. Returns ENOTFOUND
// (field "node") when the node is not the compute's.
func (s *Service) computeNode(tx shoal.Tx, workspace, compute, nodeID string) (*shoal.Compute, *shoal.Node, error) {
	c, err := s.getCompute(tx, workspace, compute)
	if err != nil {
		return nil, nil, err
	}
	n, err := tx.GetNode(nodeID)
	if shoal.ErrorCode(err) == shoal.ENOTFOUND || (err == nil && (n.Workspace != c.Workspace || n.Compute != c.Name)) {
		return nil, nil, &shoal.Error{Code: shoal.ENOTFOUND, Field: "node", Message: fmt.Sprintf("node %q is not a node of compute %q", nodeID, c.Name)}
	} else if err != nil {
		return nil, nil, err
	}
	return c, n, nil
}
