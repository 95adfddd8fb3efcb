package service

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shoal-ml/shoal"
)

// instanceHub keeps, in memory, what each instance's agent reported last
// and when its application proxy last carried a request: they change on
// every heartbeat and are not worth a write each. Keyed by computeKey.
type instanceHub struct {
	mu      sync.Mutex
	reports map[string]*instanceLive
	// idle and idleWrites keep instances' idle bookkeeping between
	// writes: it moves on every pass while an instance is used.
	idle       map[string]idleFields
	idleWrites map[string]time.Time
}

// instanceLive is the live state of one instance.
type instanceLive struct {
	report     *shoal.InstanceReport
	reportedAt time.Time
	node       string
	proxyLast  time.Time
}

func newInstanceHub() *instanceHub {
	return &instanceHub{reports: map[string]*instanceLive{}, idle: map[string]idleFields{}, idleWrites: map[string]time.Time{}}
}

func (h *instanceHub) rememberIdle(key string, st shoal.InstanceStatus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.idle[key] = idlePart(st)
}

// overlayIdle puts the idle bookkeeping kept in memory over comp's stored
// state.
func (h *instanceHub) overlayIdle(comp *shoal.Compute) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.idle[computeKey(comp.Workspace, comp.Name)]
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
	return now.Sub(h.idleWrites[key]) >= idleWriteEvery
}

func (h *instanceHub) idleWritten(key string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.idleWrites[key] = now
	delete(h.idle, key)
}

func (h *instanceHub) setReport(key, node string, r *shoal.InstanceReport, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.reports[key]
	if l == nil {
		l = &instanceLive{}
		h.reports[key] = l
	}
	l.report, l.reportedAt, l.node = r, at, node
}

func (h *instanceHub) touchProxy(key string, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.reports[key]
	if l == nil {
		l = &instanceLive{}
		h.reports[key] = l
	}
	if at.After(l.proxyLast) {
		l.proxyLast = at
	}
}

// get returns a copy of the live state of an instance.
func (h *instanceHub) get(key string) instanceLive {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.reports[key]; l != nil {
		return *l
	}
	return instanceLive{}
}

// forget drops the report of a node that is gone (the proxy time stays:
// it is activity of the instance, not of a node).
func (h *instanceHub) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l := h.reports[key]; l != nil {
		l.report, l.node = nil, ""
	}
}

// instanceStatus fills in the read-only fields of an instance.
func (s *Services) instanceStatus(tx shoal.Tx, out *shoal.Compute, nodes []*shoal.Node) {
	if out.Instance == nil {
		return
	}
	s.instances.overlayIdle(out)
	st := out.Instance
	out.State = st.State
	busy := 0
	var main *shoal.Node
	for _, n := range nodes {
		switch {
		case n.Role == shoal.NodeRoleInstance:
			main = n
		case n.CurrentAttemptID != "":
			busy++
		}
	}
	if st.State == shoal.InstanceRunning && busy > 0 {
		out.State = shoal.InstanceJobRunning
	}
	if st.LastOperation != nil {
		op := *st.LastOperation
		out.LastOperation = &op
	}
	out.AssignedUser = displayPrincipal(st.AssignedUser)
	sso := st.SSOEnabled
	out.EnableSSO = &sso
	// Azure shows the login and port of an instance's SSH server.
	ssh := shoal.SSHSettings{AdminUsername: shoal.InstanceAdminUsername, SSHKeyValue: sshKeyOf(out.SSHSettings)}
	live := s.instances.get(computeKey(out.Workspace, out.Name))
	host := "127.0.0.1"
	if main != nil && main.PrivateIPAddress != "" {
		host = main.PrivateIPAddress
	}
	if *out.SSHPublicAccessEnabled {
		port := st.SSHPort
		if live.report != nil && live.report.SSHPort > 0 {
			port = live.report.SSHPort
		}
		ssh.SSHPort = port
		if port > 0 && running(st.State) {
			out.SSHConnectionString = fmt.Sprintf("ssh %s@%s -p %d", shoal.InstanceAdminUsername, host, port)
		}
	}
	out.SSHSettings = &ssh
	if main != nil {
		out.ConnectivityEndpoints = &shoal.ConnectivityEndpoints{PrivateIPAddress: host, PublicIPAddress: host}
	}
	apps := st.Apps
	if live.report != nil {
		apps = live.report.Apps
	}
	base := strings.TrimRight(s.cfg.AppsURL, "/") + instanceAppsPath(out.Workspace, out.Name)
	for _, a := range apps {
		app := shoal.InstanceApplication{DisplayName: a.Name, EndpointURI: base + url.PathEscape(a.Name) + "/"}
		if running(st.State) {
			app.Running, app.Ready = a.Running, a.Ready
		}
		out.Applications = append(out.Applications, app)
	}
	if running(st.State) {
		idle := &shoal.IdleState{Activity: []string{}}
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
	return state == shoal.InstanceRunning || state == shoal.InstanceJobRunning || state == shoal.InstanceSettingUp
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

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// hostPort joins a host and a port.
func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
