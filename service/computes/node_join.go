package computes

import (
	"context"
	"fmt"
	"strings"
	"time"

	computekind "github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// StaticJoinTTL is how long the join command of a node added by hand
// stays valid.
const StaticJoinTTL = 24 * time.Hour

// JoinCommand is what `shoal compute add-node` prints; see
// shoal.JoinCommand.
type JoinCommand = node.JoinCommand

// AddStaticNode adds to a cluster a node that its owner joins by hand: a
// machine of theirs running `shoal agent` with the one-time join token
// returned. Such a node is capacity like any other, is never released by
// the autoscaler, holds no quota of the location, and leaves with
// RemoveStaticNode. The node records who added it. A cluster never gets
// more live nodes than its max_instances this way: the autoscaler's nodes
// and those added by hand, joined or not, count alike. Returns ENOTFOUND,
// EINVALID (an instance), ECONFLICT (being deleted, or max_instances
// reached).
func (s *Service) AddStaticNode(ctx context.Context, workspace, compute string) (*JoinCommand, error) {
	var out *JoinCommand
	err := s.store.Update(ctx, func(tx store.Tx) error {
		c, err := s.getCompute(tx, workspace, compute)
		if err != nil {
			return err
		}
		if c.IsInstance() {
			return core.Errorf(core.EINVALID, "compute %q is a compute instance (one machine); nodes are added to compute clusters", c.Name)
		}
		if c.ProvisioningState == computekind.ProvisioningDeleting {
			return core.Errorf(core.ECONFLICT, "compute %q is being deleted", c.Name)
		}
		if err := checkRoomForNode(tx, c); err != nil {
			return err
		}
		loc, err := s.catalog.Location(c.Location)
		if err != nil {
			return err
		}
		seq, err := tx.NextSeq("node")
		if err != nil {
			return err
		}
		token, hash, err := identity.NewToken()
		if err != nil {
			return err
		}
		now := tx.Now()
		n := &node.Node{
			ID: fmt.Sprintf("%s-h%d", strings.ToLower(c.Name), seq), Workspace: c.Workspace, Compute: c.Name, Role: node.NodeRoleStatic,
			Location: loc.Name, Size: c.Size, LowPriority: c.Tier == computekind.TierLowPriority, State: node.NodePreparing,
			JoinTokenHash: hash, JoinTokenExpires: now.Add(StaticJoinTTL), CreatedOn: now, LastHeartbeat: now, Version: 1,
		}
		if p := identity.PrincipalFrom(ctx); p != nil {
			n.AddedBy = p.ID
		}
		if err := tx.InsertNode(n); err != nil {
			return err
		}
		out = &JoinCommand{
			NodeID: n.ID, Compute: c.Name, JoinToken: token, ExpiresOn: n.JoinTokenExpires,
			Command: fmt.Sprintf("SHOAL_JOIN_TOKEN=%s shoal agent --server %s --node-id %s --work-dir ~/.shoal/%s", token, s.cfg.ServerURL, n.ID, n.ID),
		}
		identity.SetAuditDetail(ctx, "node %s added to %s, to be joined by hand", n.ID, c.Name)
		return computekind.AppendComputeEvent(ctx, tx, c, "node_added", fmt.Sprintf("node %s added by %s: a machine joins it with the printed command (valid until %s)", n.ID, identity.ActorName(ctx), n.JoinTokenExpires.Format(time.RFC3339)))
	})
	if err != nil {
		return nil, err
	}
	s.notify()
	return out, nil
}

// checkRoomForNode refuses a node beyond the cluster's max_instances. It
// counts the nodes the autoscaler counts as live (preparing, idle or
// running, not draining): a node on its way out frees its place.
func checkRoomForNode(tx store.Tx, c *computekind.Compute) error {
	live, err := tx.CountLiveNodes(c.Workspace, c.Name)
	if err != nil {
		return err
	}
	if c.MaxInstances != nil && live >= *c.MaxInstances {
		return &core.Error{Code: core.ECONFLICT, Field: "max_instances", Message: fmt.Sprintf(
			"max_instances: compute %q already has %d of its max_instances %d nodes (joined or waiting to join); raise max_instances or remove a node first", c.Name, live, *c.MaxInstances)}
	}
	return nil
}

// RemoveStaticNode removes a node that was joined by hand: it takes no new
// work, and leaves once its job (if any) has ended; its agent is told to
// exit. Returns ENOTFOUND, EINVALID (not a node joined by hand).
func (s *Service) RemoveStaticNode(ctx context.Context, workspace, compute, nodeID string) (*node.Node, error) {
	var out *node.Node
	err := s.store.Update(ctx, func(tx store.Tx) error {
		c, n, err := s.computeNode(tx, workspace, compute, nodeID)
		if err != nil {
			return err
		}
		if n.Role != node.NodeRoleStatic {
			return &core.Error{Code: core.EINVALID, Field: "node", Message: fmt.Sprintf("node %s was not added by hand; the autoscaler releases it (lower max_instances to shed it)", n.ID)}
		}
		n.Draining, n.StateReason = true, "removed by "+identity.ActorName(ctx)
		if n.CurrentAttemptID == "" && n.State != node.NodeUnusable {
			n.State = node.NodeLeaving
		}
		n.Version++
		if err := tx.UpdateNode(n); err != nil {
			return err
		}
		out = n
		why := "it leaves now"
		if n.CurrentJobName != "" {
			why = "it leaves once job " + n.CurrentJobName + " has ended"
		}
		return computekind.AppendComputeEvent(ctx, tx, c, "node_removing", fmt.Sprintf("node %s removed by %s: %s", n.ID, identity.ActorName(ctx), why))
	})
	if err != nil {
		return nil, err
	}
	s.cfg.Wake(nodeID)
	s.notify()
	return out, nil
}
