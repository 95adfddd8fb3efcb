package computes

import (
	"context"
	"io"
	"net/url"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// InstanceAppTarget is where the server's proxy sends a request for an
// instance's application.
type InstanceAppTarget struct {
	// Addr is the application's host:port.
	Addr string
	// BasePath is the proxy path of the application ("/api/v1/.../
	// applications/<app>/").
	BasePath string
	// StripPrefix: the application expects to be served at its root
	// (custom applications); Jupyter is told its base URL instead.
	StripPrefix bool
	// Token is sent to the application as "Authorization: token ..."
	// (Jupyter's); empty for custom applications.
	Token string
	// Mark is the environment mark (KEY=value) of the instance's node:
	// the proxy reaches the application only when the socket listening on
	// Addr is held by a process carrying it (see shoal.NodeMarker). Empty
	// when the instance's provider cannot tell, and then nothing is
	// proxied.
	Mark []string
	// ListenerOwner is the agent's report of whose process must hold
	// the listener (account, container, network namespace): anyone's
	// process can carry a copy of Mark.
	core.ListenerOwner
}

// ResolveInstanceApp checks that the caller may use an instance's
// application — the instance's user, with single sign-on enabled, on a
// running instance — records the request as activity, and returns where
// to send it. Returns ENOTFOUND, EFORBIDDEN, ECONFLICT (not running),
// EUNAVAILABLE (not listening yet).
func (s *Service) ResolveInstanceApp(ctx context.Context, workspace, name, app string) (*InstanceAppTarget, error) {
	var t *InstanceAppTarget
	err := s.store.View(ctx, func(tx store.Tx) error {
		c, err := s.getInstance(tx, workspace, name)
		if err != nil {
			return err
		}
		if err := s.checkInstanceUser(ctx, c); err != nil {
			return err
		}
		st := c.Instance
		if !st.SSOEnabled {
			return core.Errorf(core.EFORBIDDEN, "single sign-on is disabled on compute instance %q: its user turns it on with `shoal compute enable-sso -n %s`", c.Name, c.Name)
		}
		if !running(st.State) {
			return core.Errorf(core.ECONFLICT, "compute instance %q is %s; start it first (shoal compute start -n %s)", c.Name, st.State, c.Name)
		}
		live, err := s.live.Get(tx, c.Workspace, c.Name)
		if err != nil {
			return err
		}
		apps := st.Apps
		if live.Report != nil {
			apps = live.Report.Apps
		}
		base := instanceAppsPath(c.Workspace, c.Name) + url.PathEscape(app) + "/"
		for _, a := range apps {
			if a.Name != app {
				continue
			}
			if a.Addr == "" && a.Error != "" && !a.Running {
				return core.Errorf(core.ENOTFOUND, "compute instance %q has no application %q: %s", c.Name, app, a.Error)
			}
			if a.Addr == "" {
				return core.Errorf(core.EUNAVAILABLE, "application %s of compute instance %s is not listening yet", app, c.Name)
			}
			t = &InstanceAppTarget{Addr: a.Addr, BasePath: base, StripPrefix: app != compute.JupyterApplication, Mark: s.instanceMark(tx, c),
				ListenerOwner: a.ListenerOwner}
			if app == compute.JupyterApplication {
				t.Token = st.NotebookToken
			}
			return nil
		}
		return core.Errorf(core.ENOTFOUND, "compute instance %q has no application %q", c.Name, app)
	})
	if err != nil {
		return nil, err
	}
	if err := s.live.TouchProxy(ctx, workspace, name, s.cfg.Clock.Now()); err != nil {
		// Written with a later request; the request goes on.
		s.log.Warn("recording a request to an instance's application failed", "instance", name, "err", err)
	}
	return t, nil
}

// instanceMark returns the mark of the processes of c's node, or nil when
// its provider cannot tell.
func (s *Service) instanceMark(tx store.Tx, c *compute.Compute) []string {
	loc, err := s.catalog.Location(c.Location)
	if err != nil {
		return nil
	}
	m, ok := s.Provider(loc).(node.NodeMarker)
	if !ok {
		return nil
	}
	n, err := tx.GetNode(compute.InstanceNodeID(c, loc))
	if err != nil {
		return nil
	}
	return m.NodeMark(n)
}

// WriteInstanceSetupLog appends to the setup log of the instance a node
// serves (its own node only).
func (s *Service) WriteInstanceSetupLog(ctx context.Context, nodeID string, offset int64, data []byte) error {
	var ws, name string
	var l money.WorkspaceLimits
	err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := InstanceNode(tx, nodeID)
		if err != nil {
			return err
		}
		ws, name = n.Workspace, n.Compute
		l, err = tx.GetWorkspaceLimits(ws)
		return err
	})
	if err != nil {
		return err
	}
	// A setup script's output is bounded like a rank's log: the
	// workspace's cap and storage quota, then one marker line and
	// nothing more.
	return s.cfg.Logs.WriteCappedLog(l, store.LogFile{
		Workspace: ws,
		Write:     func(off int64, data []byte) error { return s.cfg.Files.WriteInstanceLog(ws, name, off, data) },
		Open:      func() (io.ReadSeekCloser, error) { return s.cfg.Files.OpenInstanceLog(ws, name) },
	}, offset, data)
}

// WriteInstanceAppLog appends to the log of a custom application of the
// instance a node serves (its own node only, and an application the
// instance has), capped as its setup log is.
func (s *Service) WriteInstanceAppLog(ctx context.Context, nodeID, app string, offset int64, data []byte) error {
	var ws, name string
	var l money.WorkspaceLimits
	err := s.store.View(ctx, func(tx store.Tx) error {
		n, err := InstanceNode(tx, nodeID)
		if err != nil {
			return err
		}
		c, err := s.getCompute(tx, n.Workspace, n.Compute)
		if err != nil {
			return err
		}
		if !hasApp(c, app) {
			return core.FieldErrorf("app", "compute instance %q has no custom application %q", c.Name, app)
		}
		ws, name = c.Workspace, c.Name
		l, err = tx.GetWorkspaceLimits(ws)
		return err
	})
	if err != nil {
		return err
	}
	return s.cfg.Logs.WriteCappedLog(l, store.LogFile{
		Workspace: ws,
		Write:     func(off int64, data []byte) error { return s.cfg.Files.WriteInstanceAppLog(ws, name, app, off, data) },
		Open:      func() (io.ReadSeekCloser, error) { return s.cfg.Files.OpenInstanceAppLog(ws, name, app) },
	}, offset, data)
}

// hasApp tells whether c has a custom application named app.
func hasApp(c *compute.Compute, app string) bool {
	for _, a := range c.CustomApplications {
		if a.Name == app {
			return true
		}
	}
	return false
}

// OpenInstanceAppLog opens the log of an instance's custom application
// (its output), readable by those who may read its setup log.
func (s *Service) OpenInstanceAppLog(ctx context.Context, workspace, name, app string) (io.ReadCloser, error) {
	if app == "" {
		return nil, core.FieldErrorf("app", "is required: the name of the custom application whose log to show")
	}
	c, err := s.instanceForLog(ctx, workspace, name, "the log of application "+app)
	if err != nil {
		return nil, err
	}
	if !hasApp(c, app) {
		return nil, core.Errorf(core.ENOTFOUND, "compute instance %q has no custom application %q", c.Name, app)
	}
	f, err := s.cfg.Files.OpenInstanceAppLog(c.Workspace, c.Name, app)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.ENOTFOUND, "application %q of compute instance %q has no log yet (it has not started, or printed nothing)", app, c.Name)
	}
	return f, err
}

// instanceForLog reads an instance whose log (what) the caller asks for,
// and checks that the caller may read it.
func (s *Service) instanceForLog(ctx context.Context, workspace, name, what string) (*compute.Compute, error) {
	var c *compute.Compute
	err := s.store.View(ctx, func(tx store.Tx) error {
		var err error
		c, err = s.getCompute(tx, workspace, name)
		if err == nil && !c.IsInstance() {
			err = core.Errorf(core.EINVALID, "compute %q is a %s, not a compute instance", c.Name, c.Type)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.checkInstanceLogReader(ctx, c, what); err != nil {
		return nil, err
	}
	return c, nil
}

// OpenInstanceLog opens an instance's setup log (kind "setup"); its
// applications' logs are OpenInstanceAppLog's.
func (s *Service) OpenInstanceLog(ctx context.Context, workspace, name, kind string) (io.ReadCloser, error) {
	if kind != "setup" {
		return nil, core.FieldErrorf("kind", "unknown log %q; instances keep their setup log (kind=setup) and their custom applications' (kind=app&app=<name>)", kind)
	}
	c, err := s.instanceForLog(ctx, workspace, name, "the setup log")
	if err != nil {
		return nil, err
	}
	f, err := s.cfg.Files.OpenInstanceLog(c.Workspace, c.Name)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.ENOTFOUND, "compute instance %q has no setup log yet (it has no setup scripts, or they have not run)", c.Name)
	}
	return f, err
}

// checkInstanceLogReader lets the instance's user, administrators and
// those who may grant roles in its workspace (Owners) read its logs (what
// names which): what setup scripts and applications print (tokens, paths,
// the user's environment) is the user's, not every Reader's or
// Contributor's.
func (s *Service) checkInstanceLogReader(ctx context.Context, c *compute.Compute, what string) error {
	if c.Instance != nil && identity.ActingPrincipalID(ctx) == c.Instance.AssignedUser {
		return nil
	}
	if s.cfg.Access.Authorize(ctx, identity.PrincipalFrom(ctx), c.Workspace, identity.ActRolesWrite) == nil {
		return nil
	}
	owner := "its user"
	if c.Instance != nil {
		owner = displayPrincipal(c.Instance.AssignedUser)
	}
	return core.Errorf(core.EFORBIDDEN, "%s of compute instance %q is readable only by its user (%s), administrators and the workspace's Owners", what, c.Name, owner)
}

// InstanceNode reads a node that must be a compute instance's own: what
// an instance's agent may act on. Returns EFORBIDDEN for any other node.
func InstanceNode(tx store.Tx, nodeID string) (*node.Node, error) {
	n, err := tx.GetNode(nodeID)
	if err != nil {
		return nil, err
	}
	if n.Role != node.NodeRoleInstance {
		return nil, core.Errorf(core.EFORBIDDEN, "node %s is not a compute instance", nodeID)
	}
	return n, nil
}
