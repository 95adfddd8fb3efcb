package computes

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// instanceHub keeps, in memory, the idle bookkeeping of the leader's
// instance lifecycle between writes: it moves on every pass while an
// instance is used. Keyed by ComputeKey. (What agents report is live
// state, the same on every replica: see package live.)
type instanceHub struct {
	mu         sync.Mutex
	idle       map[string]IdleFields
	idleWrites map[string]time.Time
}

func newInstanceHub() *instanceHub {
	return &instanceHub{idle: map[string]IdleFields{}, idleWrites: map[string]time.Time{}}
}

func (h *instanceHub) rememberIdle(key string, st compute.InstanceStatus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.idle[key] = IdlePart(st)
}

// overlayIdle puts the idle bookkeeping kept in memory over comp's stored
// state.
func (h *instanceHub) overlayIdle(comp *compute.Compute) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.idle[compute.ComputeKey(comp.Workspace, comp.Name)]
	if !ok || comp.Instance == nil {
		return
	}
	st := *comp.Instance
	st.IdleSince, st.ShutdownWarnedAt, st.Activity, st.SchedulesCheckedAt, st.IdleActive = m.IdleSince, m.ShutdownWarnedAt, m.Activity, m.SchedulesChecked, m.Active
	comp.Instance = &st
}

func (h *instanceHub) idleWriteDue(key string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return now.Sub(h.idleWrites[key]) >= IdleWriteEvery
}

func (h *instanceHub) idleWritten(key string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.idleWrites[key] = now
	delete(h.idle, key)
}

// instanceStatus fills in the read-only fields of an instance.
func (s *Service) instanceStatus(tx store.Tx, out *compute.Compute, nodes []*node.Node) {
	if out.Instance == nil {
		return
	}
	s.instances.overlayIdle(out)
	st := out.Instance
	out.State = st.State
	busy := 0
	var main *node.Node
	for _, n := range nodes {
		switch {
		case n.Role == node.NodeRoleInstance:
			main = n
		case n.CurrentAttemptID != "":
			busy++
		}
	}
	if st.State == compute.InstanceRunning && busy > 0 {
		out.State = compute.InstanceJobRunning
	}
	if st.LastOperation != nil {
		op := *st.LastOperation
		out.LastOperation = &op
	}
	out.Errors = instanceErrors(st)
	out.AssignedUser = displayPrincipal(st.AssignedUser)
	if loc, err := s.catalog.Location(out.Location); err == nil {
		out.Isolation = isolationOf(loc, main)
	}
	sso := st.SSOEnabled
	out.EnableSSO = &sso
	// Azure shows the login and port of an instance's SSH server.
	ssh := compute.SSHSettings{AdminUsername: compute.InstanceAdminUsername, SSHKeyValue: sshKeyOf(out.SSHSettings)}
	live, err := s.live.Get(tx, out.Workspace, out.Name)
	if err != nil {
		// Shown from what the controller stored instead.
		s.log.Warn("reading an instance's live state failed", "instance", out.Name, "err", err)
	}
	host := "127.0.0.1"
	if main != nil && main.PrivateIPAddress != "" {
		host = main.PrivateIPAddress
	}
	if *out.SSHPublicAccessEnabled {
		port := st.SSHPort
		if live.Report != nil && live.Report.SSHPort > 0 {
			port = live.Report.SSHPort
		}
		ssh.SSHPort = port
		ssh.HostKey = st.HostKey
		if live.Report != nil && live.Report.HostKey != "" {
			ssh.HostKey = live.Report.HostKey
		}
		if port > 0 && running(st.State) {
			out.SSHConnectionString = fmt.Sprintf("ssh %s@%s -p %d", compute.InstanceAdminUsername, host, port)
		}
	}
	out.SSHSettings = &ssh
	if main != nil {
		out.ConnectivityEndpoints = &compute.ConnectivityEndpoints{PrivateIPAddress: host, PublicIPAddress: host}
	}
	apps := st.Apps
	if live.Report != nil {
		apps = live.Report.Apps
	}
	base := strings.TrimRight(s.cfg.AppsURL, "/") + instanceAppsPath(out.Workspace, out.Name)
	for _, a := range apps {
		app := compute.InstanceApplication{DisplayName: a.Name, EndpointURI: base + url.PathEscape(a.Name) + "/"}
		if running(st.State) {
			app.Running, app.Ready, app.Error = a.Running, a.Ready, a.Error
		}
		out.Applications = append(out.Applications, app)
	}
	if running(st.State) {
		idle := &compute.IdleState{Activity: []string{}}
		if st.IdleSince != nil && !st.IdleActive {
			since := *st.IdleSince
			idle.IdleSince = &since
			idle.IdleMinutes = int(s.cfg.Clock.Now().Sub(since) / s.cfg.IdleMinute)
			if m := out.IdleTimeBeforeShutdownMinutes; m != nil && *m > 0 {
				at := since.Add(time.Duration(*m) * s.cfg.IdleMinute)
				if p := st.ShutdownPostponedUntil; p != nil && p.After(at) {
					at = *p
				}
				idle.ShutdownAt = &at
			}
		}
		if len(st.Activity) > 0 {
			idle.Activity = append(idle.Activity, st.Activity...)
		}
		if p := st.ShutdownPostponedUntil; p != nil {
			t := *p
			idle.ShutdownPostponedUntil = &t
		}
		out.IdleState = idle
	}
}

// running reports whether an instance is up (its node runs).
func running(state string) bool {
	return state == compute.InstanceRunning || state == compute.InstanceJobRunning || state == compute.InstanceSettingUp
}

// instanceAppsPath is the path of an instance's application proxy; an
// application's URL is this plus its name and "/".
func instanceAppsPath(workspace, name string) string {
	return "/api/v1/workspaces/" + url.PathEscape(workspace) + "/computes/" + url.PathEscape(name) + "/applications/"
}

// InstanceAppsPath is the path under which the server proxies an
// instance's applications (the Jupyter server's base URL is this plus
// "jupyter/").
func InstanceAppsPath(workspace, name string) string { return instanceAppsPath(workspace, name) }

// JSONEqual reports whether a and b encode to the same JSON.
func JSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// hostPort joins a host and a port.
func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
