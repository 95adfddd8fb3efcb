package computes

import (
	"context"
	"fmt"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// ListNodes returns the nodes of a compute, as `list-nodes` shows them.
func (s *Service) ListNodes(ctx context.Context, workspace, compute string) (out []*node.Node, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		c, err := s.getCompute(tx, workspace, compute)
		if err != nil {
			return err
		}
		out, err = tx.ListNodes(node.NodeFilter{Workspace: c.Workspace, Compute: c.Name})
		return err
	})
	if out == nil {
		out = []*node.Node{}
	}
	return out, err
}

// PreemptNode takes a node back as a cloud evicts low-priority capacity: its
// work is stopped and requeued without spending the job's retry budget,
// and the node goes away.
func (s *Service) PreemptNode(ctx context.Context, workspace, compute, nodeID string) (*node.Node, error) {
	if err := s.PreemptNodeBecause(ctx, workspace, compute, nodeID, "preempted on request by "+identity.ActorName(ctx)); err != nil {
		return nil, err
	}
	var n *node.Node
	err := s.store.View(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.GetNode(nodeID)
		return err
	})
	return n, err
}

// PreemptNodeBecause evicts a node as its provider would reclaim it,
// with reason (the simulated preemption of the control loops).
func (s *Service) PreemptNodeBecause(ctx context.Context, workspace, compute, nodeID, reason string) error {
	err := s.store.Update(ctx, func(tx store.Tx) error {
		c, n, err := s.computeNode(tx, workspace, compute, nodeID)
		if err != nil {
			return err
		}
		if n.State == node.NodePreempted || n.State == node.NodeLeaving || n.State == node.NodeUnusable {
			return core.Errorf(core.ECONFLICT, "node %s is already %s", n.ID, n.State)
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
func MarkPreempted(ctx context.Context, tx store.Tx, c *compute.Compute, n *node.Node, reason string) error {
	n.State, n.StateReason, n.Draining = node.NodePreempted, reason, true
	n.Version++
	if err := tx.UpdateNode(n); err != nil {
		return err
	}
	detail := reason
	if n.CurrentJobName != "" {
		detail += fmt.Sprintf("; job %s will be requeued", n.CurrentJobName)
	}
	return compute.AppendComputeEvent(ctx, tx, c, core.EventPreempted, fmt.Sprintf("node %s: %s", n.ID, detail))
}

// NodeLeaving records an agent's notice that its machine is being taken
// back (a Slurm pilot preempted, cancelled or at its time limit): the node
// is preempted, as a cloud's low-priority node would be. A node already
// leaving, preempted or lost is left as it is; a node Shoal itself is
// releasing gets the notice because Shoal cancelled it.
func (s *Service) NodeLeaving(ctx context.Context, nodeID, why string) error {
	changed := false
	err := s.store.Update(ctx, func(tx store.Tx) error {
		changed = false // a run again starts over
		n, err := tx.GetNode(nodeID)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil
		} else if err != nil {
			return err
		}
		if n.State == node.NodePreempted || n.State == node.NodeLeaving || n.State == node.NodeUnusable {
			return nil
		}
		c, err := tx.GetCompute(n.Workspace, n.Compute)
		if err != nil {
			return err
		}
		changed = true
		return MarkPreempted(identity.WithPrincipal(ctx, node.NodePrincipal(n)), tx, c, n, "taken back by its provider: "+why)
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
func (s *Service) computeNode(tx store.Tx, workspace, compute, nodeID string) (*compute.Compute, *node.Node, error) {
	c, err := s.getCompute(tx, workspace, compute)
	if err != nil {
		return nil, nil, err
	}
	n, err := tx.GetNode(nodeID)
	if core.ErrorCode(err) == core.ENOTFOUND || (err == nil && (n.Workspace != c.Workspace || n.Compute != c.Name)) {
		return nil, nil, &core.Error{Code: core.ENOTFOUND, Field: "node", Message: fmt.Sprintf("node %q is not a node of compute %q", nodeID, c.Name)}
	} else if err != nil {
		return nil, nil, err
	}
	return c, n, nil
}
