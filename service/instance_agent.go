package service

import (
	"context"
	"strings"

	"github.com/shoal-ml/shoal"
)

// instanceTask is what an instance's agent must serve, built for every
// sync so that changes (an SSH key set later) reach it within a heartbeat.
func (s *Services) instanceTask(tx shoal.Tx, n *shoal.Node) (*shoal.InstanceTask, error) {
	c, err := tx.GetCompute(n.Workspace, n.Compute)
	if shoal.ErrorCode(err) == shoal.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if c.Instance == nil {
		return nil, nil
	}
	st := c.Instance
	t := &shoal.InstanceTask{
		Workspace: c.Workspace, Name: c.Name,
		SSHEnabled:     c.SSHPublicAccessEnabled != nil && *c.SSHPublicAccessEnabled,
		JupyterBaseURL: instanceAppsPath(c.Workspace, c.Name) + shoal.JupyterApplication + "/",
		NotebookToken:  st.NotebookToken,
		Apps:           c.CustomApplications,
		Identities:     taskIdentities(tx, c),
	}
	if k := sshKeyOf(c.SSHSettings); t.SSHEnabled && k != "" {
		t.AuthorizedKeys = []string{k}
	}
	if sc := c.SetupScripts; sc != nil {
		if !st.CreationScriptDone {
			t.CreationScript = sc.CreationScript
		}
		t.StartupScript = sc.StartupScript
	}
	return t, nil
}

// recordInstanceReport keeps what an instance's agent reported; the
// lifecycle controller reads it on its next pass.
func (s *Services) recordInstanceReport(ctx context.Context, nodeID string, r *shoal.InstanceReport) {
	// The node's ID says which instance it serves; reading the node is
	// cheap and keeps a node from reporting for another instance.
	var key string
	_ = s.store.View(ctx, func(tx shoal.Tx) error {
		n, err := tx.GetNode(nodeID)
		if err != nil || n.Role != shoal.NodeRoleInstance {
			return err
		}
		key = computeKey(n.Workspace, n.Compute)
		return nil
	})
	if key == "" {
		return
	}
	prev := s.instances.get(key)
	s.instances.setReport(key, nodeID, r, s.cfg.Clock.Now())
	// A phase change moves the instance's state: run a pass soon.
	if prev.report == nil || prev.report.Phase != r.Phase || !strings.EqualFold(appsKey(prev.report), appsKey(r)) {
		s.notify()
	}
}

func appsKey(r *shoal.InstanceReport) string {
	var b strings.Builder
	for _, a := range r.Apps {
		b.WriteString(a.Name + "=" + a.Addr)
		if a.Ready {
			b.WriteString("+")
		}
		b.WriteString(";")
	}
	return b.String()
}
