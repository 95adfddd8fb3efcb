package computes

import (
	"context"
	"encoding/hex"
	"io"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// NodeSSH is the admin account a cluster's nodes serve SSH with, or nil
// when the cluster has no SSH access. The admin password never leaves the
// server, nor is it stored: the node gets the stored salted hash to check
// a login against.
func (s *Service) NodeSSH(c *compute.Compute) *node.NodeSSH {
	if c == nil || c.Type == compute.ComputeTypeInstance || c.SSHPublicAccessEnabled == nil || !*c.SSHPublicAccessEnabled || c.SSHSettings == nil {
		return nil
	}
	out := &node.NodeSSH{AdminUsername: c.SSHSettings.AdminUsername, RunAs: "compute:" + c.Workspace + "/" + c.Name}
	if out.AdminUsername == "" {
		out.AdminUsername = compute.InstanceAdminUsername
	}
	if k := c.SSHSettings.SSHKeyValue; k != "" {
		out.AuthorizedKeys = []string{k}
	}
	if salt, hash, ok := c.SSHSettings.PasswordSaltAndHash(); ok {
		out.PasswordSalt, out.PasswordSHA256 = salt, hash
	} else if pw := c.SSHSettings.AdminPassword; pw != "" {
		// Stored in the clear by an older server, until SealStoredSecrets
		// hashes it.
		salt := make([]byte, 16)
		_, _ = io.ReadFull(s.cfg.Random, salt)
		out.PasswordSalt = hex.EncodeToString(salt)
		out.PasswordSHA256 = compute.NodePasswordHash(out.PasswordSalt, pw)
	}
	return out
}

// RecordNodeSSHPort stores where a cluster node's SSH server listens, as
// its agent reported it (list-nodes shows it; Azure's node port is the
// SSH port).
func (s *Service) RecordNodeSSHPort(ctx context.Context, nodeID string, port int) error {
	return s.store.Update(identity.WithPrincipal(ctx, node.NodePrincipal(&node.Node{ID: nodeID})), func(tx store.Tx) error {
		n, err := tx.GetNode(nodeID)
		if core.ErrorCode(err) == core.ENOTFOUND {
			return nil // released meanwhile
		}
		if err != nil || n.SSHPort == port {
			return err
		}
		n.SSHPort = port
		n.Version++
		return tx.UpdateNode(n)
	})
}
