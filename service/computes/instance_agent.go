package computes

import (
	"context"
	"fmt"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/service/access"
	"github.com/shoal-ml/shoal/store"
)

// InstanceTask is what an instance's agent must serve, built for every
// sync so that changes (an SSH key set later) reach it within a heartbeat.
func (s *Service) InstanceTask(tx store.Tx, n *node.Node) (*node.InstanceTask, error) {
	c, err := tx.GetCompute(n.Workspace, n.Compute)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if c.Instance == nil {
		return nil, nil
	}
	st := c.Instance
	t := &node.InstanceTask{
		Workspace: c.Workspace, Name: c.Name,
		SSHEnabled:     c.SSHPublicAccessEnabled != nil && *c.SSHPublicAccessEnabled,
		JupyterBaseURL: instanceAppsPath(c.Workspace, c.Name) + compute.JupyterApplication + "/",
		NotebookToken:  st.NotebookToken,
		Apps:           c.CustomApplications,
		Identities:     access.TaskIdentities(tx, c),
		RunAs:          st.AssignedUser,
	}
	if loc, err := s.catalog.Location(c.Location); err == nil {
		t.Container = InstanceContainer(c, loc, n, s.catalog)
	}
	// Sent even when the node has no runtime: its agent then refuses to
	// start the instance outside its subnet.
	t.Network = node.SubnetNetwork(c.Workspace, &c.ComputeSpec)
	if k := sshKeyOf(c.SSHSettings); t.SSHEnabled && k != "" {
		t.AuthorizedKeys = []string{k}
	}
	if sc := c.SetupScripts; sc != nil {
		if !st.CreationScriptDone {
			t.CreationScript = sc.CreationScript
		}
		t.StartupScript = sc.StartupScript
	}
	if err := s.appImageTask(tx, c, t); err != nil {
		return nil, err
	}
	return t, nil
}

// RecordInstanceReport keeps what an instance's agent reported; the
// lifecycle controller reads it on its next pass.
func (s *Service) RecordInstanceReport(ctx context.Context, nodeID string, r *node.InstanceReport) {
	// The node's ID says which instance it serves; reading the node is
	// cheap and keeps a node from reporting for another instance.
	var n *node.Node
	_ = s.store.View(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.GetNode(nodeID)
		return err
	})
	if n == nil || n.Role != node.NodeRoleInstance {
		return
	}
	if len(r.SSHLogins) > 0 {
		s.auditSSHLogins(ctx, nodeID, r.SSHLogins)
	}
	// Kept where every replica reads it: the agent may sync with one
	// that does not run the controllers.
	moved, err := s.live.Report(ctx, n.Workspace, n.Compute, nodeID, r, s.cfg.Clock.Now())
	if err != nil {
		s.log.Warn("recording an instance's report failed", "node", nodeID, "err", err)
	}
	// A phase change moves the instance's state: run a pass soon.
	if moved {
		s.notify()
	}
}

// ActComputesSSH names SSH logins to an instance in the audit log.
const ActComputesSSH = "computes/ssh/action"

// auditSSHLogins writes an instance's SSH logins to the audit log: an
// accepted login is its user's (only their key is authorized), a refused
// one is recorded as denied.
func (s *Service) auditSSHLogins(ctx context.Context, nodeID string, logins []node.SSHLogin) {
	err := s.store.Update(ctx, func(tx store.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil {
			return err
		}
		c, err := tx.GetCompute(n.Workspace, n.Compute)
		if err != nil || c.Instance == nil {
			return err
		}
		for _, l := range logins {
			rec := &identity.AuditRecord{
				Time: l.At.UTC(), Action: ActComputesSSH, Target: compute.ComputeResourceID(c.Workspace, c.Name), Workspace: c.Workspace,
				Source: l.Remote, PrincipalID: c.Instance.AssignedUser, Outcome: identity.AuditSucceeded,
				Detail: fmt.Sprintf("ssh login as %s with key %s", l.User, l.KeyFingerprint),
			}
			if !l.Accepted {
				rec.PrincipalID, rec.Outcome = "anonymous", identity.AuditDenied
				rec.Detail = "ssh connection refused: " + l.Error
			}
			if err := tx.AppendAudit(rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("recording SSH logins in the audit log failed", "node", nodeID, "err", err)
	}
}
