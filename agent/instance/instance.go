package instance

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/apps"
	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/msi"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/decide/instance/idle"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/netns"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// Files of an instance in its node's work dir, which survives stop and
// start: the home, the SSH host key and the ports the instance used last
// (so that the SSH port stays the same across restarts when it is free).
const (
	instanceHome    = "home"
	hostKeyFile     = "ssh_host_ed25519_key"
	sshPortFile     = "ssh_port"
	jupyterPortFile = "jupyter_port"
	setupLogFile    = "setup.log"
)

// Runtime serves a compute instance from its agent: SSH, the
// notebook, custom applications, setup scripts and the MSI endpoint, and
// reports what the server needs for idle shutdown.
type Runtime struct {
	n    Node
	dir  string
	home string

	mu           sync.Mutex
	task         *node.InstanceTask
	keys         []ssh.PublicKey
	phase        string
	setupErr     string
	creationDone bool
	ssh          *sshd.Server
	sup          *apps.Supervisor
	images       *imageApps
	appLogs      *appLogShipping
	msi          *msi.Endpoint
	jupyter      *idle.Jupyter
	activity     activitySample
	// sampling is set while a sample started by Report runs.
	sampling bool
	// logins wait for the next report; sent counts those the report in
	// flight carries, dropped once the server has them.
	logins     []node.SSHLogin
	sentLogins int
	cancel     context.CancelFunc
	done       chan struct{}
	// account is the OS account the instance user's shells, notebook,
	// applications and setup scripts run as.
	account *runas.Account
	// box is the instance's container when it runs as one (the task's
	// Container); nil when it runs as host processes.
	box *instanceBox
	// net is the instance's network namespace when it runs as host
	// processes on a node that makes them; nil: the host's network.
	net *hostNet
	// jupyterPort is the notebook's port when it runs in box.
	jupyterPort int
	// jupyterMissing says why the instance has no notebook (the host has
	// no Jupyter), for the report: the user sees it on the instance
	// and in the proxy's answer instead of a bare "no application".
	jupyterMissing string
}

// activitySample is the last look at Jupyter's kernels and terminals and
// the instance's CPU use.
type activitySample struct {
	at        time.Time
	kernels   []node.KernelActivity
	terminals []node.KernelActivity
	cpu       *float64
	cpuTicks  uint64
	cpuAt     time.Time
}

// New is the runtime of the instance that node n serves; nothing runs
// until the first task (Update, then Start).
func New(n Node) *Runtime {
	return &Runtime{n: n, dir: n.WorkDir, home: filepath.Join(n.RunDir, instanceHome), phase: node.InstancePhaseSettingUp, done: make(chan struct{})}
}

// Start runs the instance in the background, detached from ctx's
// cancellation (Close ends it).
func (rt *Runtime) Start(ctx context.Context) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rt.cancel = cancel
	go rt.run(rctx)
}

// Update installs a new task; it reports whether it is the first (the
// caller then starts the runtime).
func (rt *Runtime) Update(t *node.InstanceTask) bool {
	keys, err := sshd.ParseAuthorizedKeys(t.AuthorizedKeys)
	if err != nil {
		rt.n.Log.Warn("the instance's SSH key cannot be read", "err", err)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	first := rt.task == nil
	rt.task, rt.keys = t, keys
	return first
}

func (rt *Runtime) authorizedKeys() []ssh.PublicKey {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.keys
}

// env is the environment of the user's shells, notebooks and apps.
func (rt *Runtime) env() []string {
	rt.mu.Lock()
	t, m, acct := rt.task, rt.msi, rt.account
	rt.mu.Unlock()
	env := append(acct.Env(),
		"HOME="+rt.home, "SHOAL_WORKSPACE="+t.Workspace, "SHOAL_INSTANCE="+t.Name, "CI_NAME="+t.Name, "CI_WORKSPACE="+t.Workspace, "CI_RESOURCE_GROUP=shoal",
	)
	env = append(env, procmark.Node(rt.n.NodeID, rt.n.WorkDir)...)
	// Azure's SDKs reach Shoal from the instance as from a job; the
	// identity endpoint's variables when it has an identity.
	extra := rt.n.SDKEnv()
	if m != nil {
		for k, v := range m.Env() {
			extra[k] = v
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// baseEnv is the part of the agent's environment an instance's processes
// get (the path, the locale, the time zone, the GPUs the node owns), plus
// env(). Nothing else of the agent's passes: it is the server's
// environment, which can hold a database password or a cloud credential.
func (rt *Runtime) baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "LANG", k == "LANGUAGE", k == "TZ", k == "TERM", k == "SHELL", k == "USER", k == "LOGNAME",
			strings.HasPrefix(k, "LC_"), k == "CUDA_VISIBLE_DEVICES", k == "NVIDIA_VISIBLE_DEVICES":
			out = append(out, kv)
		}
	}
	return append(out, rt.env()...)
}

// run brings the instance up: home, identity endpoint, SSH, setup
// scripts, then applications; then it waits to be stopped.
func (rt *Runtime) run(ctx context.Context) {
	defer close(rt.done)
	log := rt.n.Log.With("instance", rt.currentTask().Name)
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		log.Warn("instance setup failed", "err", msg)
		rt.mu.Lock()
		rt.phase, rt.setupErr = node.InstancePhaseSetupFailed, msg
		rt.mu.Unlock()
	}
	t := rt.currentTask()
	acct, err := rt.n.Accounts.For(t.RunAs)
	if err != nil {
		fail("the instance user's account: %v", err)
		return
	}
	rt.mu.Lock()
	rt.account = acct
	rt.mu.Unlock()
	if n := t.Network; n != nil && t.Container == nil {
		// Never outside the subnet it asked for.
		fail("the instance is in virtual network %q, subnet %q, a container network, and this node has no usable container runtime to run it in one; it is not started outside its subnet", n.VNet, n.Subnet)
		return
	}
	if t.Container != nil {
		// One long-lived container; the home is azureuser's inside it.
		box, err := rt.startBox(ctx, t)
		if err != nil {
			fail("starting the instance's container (image %s): %v", t.Container.Image, err)
			return
		}
		rt.mu.Lock()
		rt.box = box
		rt.mu.Unlock()
		log.Info("the instance runs in a container", "container", box.id, "image", t.Container.Image, "root_access", t.Container.RootAccess)
	} else if err := acct.MkdirOwned(rt.home); err != nil {
		// The home is the instance user's own (0700): neither another
		// user's work nor the agent's other files are reachable from it.
		fail("creating the home: %v", err)
		return
	} else if rt.n.OwnNetwork {
		h, err := rt.openHostNet()
		if err != nil {
			fail("the instance's network namespace: %v", err)
			return
		}
		rt.mu.Lock()
		rt.net = h
		rt.mu.Unlock()
		if rt.n.Slirp == "" {
			log.Warn("this node has no slirp4netns: the instance's network namespace reaches the server when the agent reaches it on the loopback, and its identity endpoint, nothing else")
		}
	}
	if len(t.Identities) > 0 {
		mint := func(ctx context.Context, req *node.TokenRequest) (*node.TokenResponse, error) {
			return rt.n.Client.InstanceToken(ctx, req)
		}
		var m *msi.Endpoint
		if box := rt.box; box != nil && box.ownNet {
			// The container's loopback is its own: the endpoint listens
			// there, where its processes look for it.
			var ln net.Listener
			if ln, err = netns.Listen(box.pid, "tcp", "127.0.0.1:0"); err == nil {
				m, err = msi.Serve(ctx, t.Identities, mint, log, ln)
			}
		} else if rt.net != nil {
			// The instance's own loopback, likewise.
			var ln net.Listener
			if ln, err = rt.net.listen("127.0.0.1:0"); err == nil {
				m, err = msi.Serve(ctx, t.Identities, mint, log, ln)
			}
		} else {
			m, err = msi.Start(ctx, t.Identities, mint, log)
		}
		if err != nil {
			fail("starting the managed identity endpoint: %v", err)
			return
		}
		rt.mu.Lock()
		rt.msi = m
		rt.mu.Unlock()
	}
	if t.SSHEnabled {
		srv, err := rt.startSSH()
		if err != nil {
			fail("starting the SSH server: %v", err)
			return
		}
		rt.mu.Lock()
		rt.ssh = srv
		rt.mu.Unlock()
	}
	if !rt.setup(ctx, t, fail) {
		return
	}
	rt.startApps(t, log)
	rt.mu.Lock()
	rt.phase = node.InstancePhaseRunning
	rt.mu.Unlock()
	log.Info("instance running")
	<-ctx.Done()
}

func (rt *Runtime) currentTask() *node.InstanceTask {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.task
}

// startSSH starts the SSH server on the port the instance used last, if
// it is free, so that known connection strings keep working.
func (rt *Runtime) startSSH() (*sshd.Server, error) {
	port := files.ReadPort(filepath.Join(rt.dir, sshPortFile))
	// SFTP runs as a program of the login's account only when logins run
	// as one; else the server serves it itself.
	cred := rt.credential()
	var sftpCmd []string
	var sftpWhy string
	if cred != nil {
		sftpCmd, sftpWhy = files.SFTPCommand(rt.n.RunDir)
	}
	cfg := sshd.Config{
		HostKeyPath: filepath.Join(rt.dir, hostKeyFile), Username: compute.InstanceAdminUsername,
		AuthorizedKeys: rt.authorizedKeys, HomeDir: rt.home, Env: rt.env, Logger: rt.n.Log.With("component", "sshd"),
		Now: rt.n.Clock.Now, OnLogin: rt.login, Credential: cred, SFTPCommand: sftpCmd, SFTPUnavailable: sftpWhy,
	}
	if h := rt.hostNet(); h != nil {
		// Sessions and forwards in the instance's own network.
		cfg.Network = h.ns
	}
	// When the instance is a container, its sessions belong inside it:
	// shells, sftp, scp and forwards run in the container's namespaces
	// as azureuser, never on the host.
	rt.mu.Lock()
	box := rt.box
	rt.mu.Unlock()
	if box != nil {
		ex, ok := box.rt.(container.Execer)
		if !ok {
			return nil, fmt.Errorf("the instance's container engine (%T) cannot start SSH sessions inside it", box.rt)
		}
		cfg.Container = &sshd.ContainerTarget{Runtime: ex, ID: box.id, User: compute.InstanceAdminUsername, Home: boxHome}
	}
	var srv *sshd.Server
	var err error
	if port > 0 {
		cfg.Listen = net.JoinHostPort(rt.n.Address, strconv.Itoa(port))
		srv, err = sshd.Start(cfg)
	}
	if srv == nil {
		cfg.Listen = net.JoinHostPort(rt.n.Address, "0")
		if srv, err = sshd.Start(cfg); err != nil {
			return nil, err
		}
	}
	_ = os.WriteFile(filepath.Join(rt.dir, sshPortFile), []byte(strconv.Itoa(srv.Addr().Port)), 0o600)
	return srv, nil
}

// setup runs the creation script (once in the instance's life) and the
// startup script, shipping their log to the server as they run.
func (rt *Runtime) setup(ctx context.Context, t *node.InstanceTask, fail func(string, ...any)) bool {
	logPath := filepath.Join(rt.dir, setupLogFile)
	scripts := []apps.Script{}
	add := func(name string, s *compute.SetupScript) {
		if s == nil {
			return
		}
		timeout := compute.DefaultSetupScriptTimeoutMinutes
		if s.TimeoutMinutes != nil {
			timeout = *s.TimeoutMinutes
		}
		scripts = append(scripts, apps.Script{Name: name, Path: s.Path, Command: s.Command, Timeout: time.Duration(timeout) * time.Minute, Credential: rt.credential(),
			Start: rt.hostNet().start()})
	}
	add("creation_script", t.CreationScript)
	add("startup_script", t.StartupScript)
	if len(scripts) == 0 {
		return true
	}
	ship := &setupLogShipper{c: rt.n.Client, path: logPath}
	if st, err := os.Stat(logPath); err == nil {
		ship.offset = st.Size() // earlier starts' output is with the server
	}
	shipCtx, stop := context.WithCancel(ctx)
	shipped := make(chan struct{})
	go func() { defer close(shipped); ship.loop(shipCtx) }()
	defer func() { stop(); <-shipped; ship.flush(ctx) }()
	rt.mu.Lock()
	box := rt.box
	rt.mu.Unlock()
	for _, s := range scripts {
		var res apps.ScriptResult
		if box != nil {
			res.Err = rt.runScriptInBox(ctx, box, s, logPath)
		} else {
			res = apps.RunScript(ctx, s, rt.home, rt.baseEnv(), logPath)
		}
		if s.Name == "creation_script" && res.Err == nil {
			rt.mu.Lock()
			rt.creationDone = true
			rt.mu.Unlock()
		}
		if res.Err != nil {
			fail("%v", res.Err)
			return false
		}
	}
	return true
}

// startApps starts the notebook (when the host has Jupyter) and the
// custom applications.
func (rt *Runtime) startApps(t *node.InstanceTask, log interface{ Warn(string, ...any) }) {
	// The applications' logs are named after them (users name them): a
	// folder of their own keeps them off the agent's files.
	logDir := filepath.Join(rt.dir, "app-logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		log.Warn("the applications' log folder", "err", err)
	}
	h := rt.hostNet()
	sup := apps.NewSupervisor(apps.SupervisorConfig{Home: rt.home, LogDir: logDir, BaseEnv: rt.baseEnv(), Logger: rt.n.Log.With("component", "apps"), Credential: rt.credential(),
		Start: h.start(), Dial: h.dial()})
	rt.mu.Lock()
	rt.sup = sup
	box := rt.box
	rt.mu.Unlock()
	if box != nil {
		// Jupyter inside; applications from images beside it, in
		// containers of their own, as beside host processes.
		rt.startBoxApps(t, box, log)
		return
	}
	bin, found := apps.FindJupyter()
	if !found && t.NotebookToken != "" {
		rt.mu.Lock()
		rt.jupyterMissing = JupyterMissing
		rt.mu.Unlock()
		log.Warn("no Jupyter on this host: the instance has no notebook", "hint", JupyterMissing)
	}
	if found && t.NotebookToken != "" {
		port := files.ReadPort(filepath.Join(rt.dir, jupyterPortFile))
		if port == 0 || !portFree(h, port) {
			port = 0
			if p, err := anyFreePort(); err == nil {
				port = p
			}
		}
		_ = os.WriteFile(filepath.Join(rt.dir, jupyterPortFile), []byte(strconv.Itoa(port)), 0o600)
		if err := sup.Start(apps.JupyterApp(bin, port, t.JupyterBaseURL, t.NotebookToken, rt.home)); err != nil {
			log.Warn("starting Jupyter failed", "err", err)
		} else {
			rt.mu.Lock()
			rt.jupyter = &idle.Jupyter{BaseURL: "http://127.0.0.1:" + strconv.Itoa(port) + t.JupyterBaseURL, Token: t.NotebookToken}
			if h != nil {
				// The idle check asks the notebook inside.
				rt.jupyter.HTTP = h.httpClient(10 * time.Second)
			}
			rt.mu.Unlock()
		}
	}
	shipping := rt.shipAppLogs(t, logDir)
	images := rt.startImageApps(t, logDir, nil)
	rt.mu.Lock()
	rt.images, rt.appLogs = images, shipping
	rt.mu.Unlock()
	for _, app := range t.Apps {
		if app.Image != nil {
			continue // in a container: startImageApps
		}
		env := make([]string, 0, len(app.EnvironmentVariables))
		for k, v := range app.EnvironmentVariables {
			env = append(env, k+"="+v)
		}
		port := 0
		if len(app.Endpoints) > 0 {
			port = app.Endpoints[0].Target
		}
		if err := sup.Start(apps.App{Name: app.Name, Command: []string{"/bin/bash", "-c", app.Command}, Env: env, Port: port}); err != nil {
			log.Warn("starting a custom application failed", "app", app.Name, "err", err)
		}
	}
}

// portFree says whether port is free on the instance's loopback (its
// namespace's when h is not nil).
func portFree(h *hostNet, port int) bool {
	l, err := h.listen(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// anyFreePort picks a free port on the loopback.
func anyFreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Report is what the instance tells the server on each sync. It never
// waits for a sample of the instance's activity: it starts one when the
// last is older than sampleEvery and reports the latest that ended. The
// sync that carries the report is the node's heartbeat, and a sample
// asks the container engine (the container's CPU) and Jupyter, which on
// a loaded host may take longer than the node's lease: a sync held
// behind them had a healthy instance's node declared lost.
func (rt *Runtime) Report(ctx context.Context) *node.InstanceReport {
	rt.sampleSoon(ctx)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	r := &node.InstanceReport{Phase: rt.phase, SetupError: rt.setupErr, CreationScriptDone: rt.creationDone}
	if rt.ssh != nil {
		r.SSHPort = rt.ssh.Addr().Port
		r.HostKeyFingerprint, r.HostKey = rt.ssh.HostKeyFingerprint(), rt.ssh.HostKey()
		r.SSHSessions = rt.ssh.ActiveSessions()
		last := rt.ssh.LastActivity()
		r.SSHLastActivity = &last
	}
	if rt.box != nil {
		if rt.jupyterPort > 0 {
			up := rt.box.listening(rt.jupyterPort)
			uid := rt.box.hostUID
			app := compute.InstanceAppReport{Name: apps.JupyterAppName, Addr: "127.0.0.1:" + strconv.Itoa(rt.jupyterPort), Running: up, Ready: up, ListenerOwner: core.ListenerOwner{UID: &uid}}
			if rt.box.ownNet {
				// In the container's own namespace, which the proxy
				// enters through its first process (it carries the
				// node's mark and runs as azureuser, as Jupyter does).
				app.NetNSPID = rt.box.pid
			}
			r.Apps = append(r.Apps, app)
		}
	} else if rt.sup != nil {
		var uid *int
		if rt.account.Switched() {
			n := int(rt.account.UID)
			uid = &n
		}
		for _, st := range rt.sup.Status() {
			app := compute.InstanceAppReport{Name: st.Name, Addr: st.Addr, Running: st.Running, Ready: st.Ready, ListenerOwner: core.ListenerOwner{UID: uid}}
			if rt.net != nil && st.PID > 0 {
				// In the instance's namespace, which the proxy enters
				// through the application's own process (it carries the
				// node's mark and runs as the instance user).
				app.NetNSPID = st.PID
			}
			r.Apps = append(r.Apps, app)
		}
		if rt.jupyterMissing != "" {
			r.Apps = append(r.Apps, compute.InstanceAppReport{Name: apps.JupyterAppName, Error: rt.jupyterMissing})
		}
	}
	r.Apps = append(r.Apps, rt.images.reports()...)
	r.Kernels, r.Terminals, r.CPUPercent = rt.activity.kernels, rt.activity.terminals, rt.activity.cpu
	rt.sentLogins = min(len(rt.logins), maxLoginsPerReport)
	r.SSHLogins = append([]node.SSHLogin(nil), rt.logins[:rt.sentLogins]...)
	return r
}

// Bounds on the SSH logins kept for the audit log while the server does
// not take them: a scanner hammering the port cannot fill memory.
const (
	maxLoginsPerReport = 50
	maxLoginsKept      = 1000
)

// login keeps an SSH login for the next report.
func (rt *Runtime) login(l sshd.Login) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.logins) >= maxLoginsKept {
		return
	}
	rt.logins = append(rt.logins, node.SSHLogin{At: l.At, User: l.User, Remote: l.Remote, KeyFingerprint: l.KeyFingerprint, Accepted: l.Accepted, Error: l.Err})
}

// Reported drops the logins the last report carried: the server has them.
func (rt *Runtime) Reported() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.logins = rt.logins[rt.sentLogins:]
	rt.sentLogins = 0
}

// sampleEvery bounds how often the agent asks Jupyter and reads /proc.
const sampleEvery = 2 * time.Second

// sampleTimeout bounds a sample started by Report: one that the engine
// or Jupyter holds longer ends, and the next Report starts another.
const sampleTimeout = 30 * time.Second

// sampleSoon starts a sample in the background when one is due and none
// is under way.
func (rt *Runtime) sampleSoon(ctx context.Context) {
	rt.mu.Lock()
	if rt.sampling || rt.n.Clock.Now().Sub(rt.activity.at) < sampleEvery {
		rt.mu.Unlock()
		return
	}
	rt.sampling = true
	rt.mu.Unlock()
	sctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	go func() {
		defer cancel()
		rt.sample(sctx)
		rt.mu.Lock()
		rt.sampling = false
		rt.mu.Unlock()
	}()
}

// sample refreshes the activity sample when it is older than sampleEvery.
func (rt *Runtime) sample(ctx context.Context) {
	now := rt.n.Clock.Now()
	rt.mu.Lock()
	if now.Sub(rt.activity.at) < sampleEvery {
		rt.mu.Unlock()
		return
	}
	rt.activity.at = now
	j := rt.jupyter
	rt.mu.Unlock()
	var kernels, terminals []node.KernelActivity
	if j != nil {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if ks, err := j.Kernels(cctx); err == nil {
			for _, k := range ks {
				kernels = append(kernels, node.KernelActivity{Name: k.Name + " " + k.ID, ExecutionState: k.ExecutionState, LastActivity: k.LastActivity, Connections: k.Connections})
			}
		}
		if ts, err := j.Terminals(cctx); err == nil {
			for _, t := range ts {
				terminals = append(terminals, node.KernelActivity{Name: t.Name, LastActivity: t.LastActivity})
			}
		} else if !errors.Is(err, idle.ErrTerminalsUnavailable) {
			rt.n.Log.Debug("reading Jupyter's terminals failed", "err", err)
		}
		cancel()
	}
	uid := -1
	rt.mu.Lock()
	if rt.account.Switched() {
		uid = int(rt.account.UID)
	}
	box := rt.box
	rt.mu.Unlock()
	var ticks uint64
	read := true
	if box != nil {
		// The container's cgroup: every process of the instance, and
		// nothing of another's.
		ticks, read = boxCPUTicks(ctx, box)
	} else {
		ticks = nodeCPUTicks(rt.n.NodeID, rt.n.WorkDir, uid)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.activity.kernels, rt.activity.terminals = kernels, terminals
	if !read {
		// The engine did not say: the CPU sample stays as it was (a 0
		// taken as the count would make the next one the container's
		// whole life over two seconds, a busy instance that is idle).
		return
	}
	if a := &rt.activity; !a.cpuAt.IsZero() && ticks >= a.cpuTicks {
		pct := cpuPercent(ticks-a.cpuTicks, now.Sub(a.cpuAt))
		a.cpu = &pct
	}
	rt.activity.cpuTicks, rt.activity.cpuAt = ticks, now
}

// Close stops everything the instance runs.
func (rt *Runtime) Close() {
	if rt.cancel != nil {
		rt.cancel()
		<-rt.done
	}
	rt.mu.Lock()
	sup, srv, m, box, images, appLogs, h := rt.sup, rt.ssh, rt.msi, rt.box, rt.images, rt.appLogs, rt.net
	rt.mu.Unlock()
	// The applications first (they share the instance's network), then
	// the instance's processes, then its container.
	images.stop()
	if sup != nil {
		sup.StopAll()
	}
	// Their last words go to the server before the instance is gone.
	appLogs.stop()
	if box != nil {
		// Stop removes the container; the home stays for the next start.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := box.remove(ctx); err != nil {
			rt.n.Log.Warn("removing the instance's container failed", "container", box.id, "err", err)
		}
		cancel()
	}
	if srv != nil {
		srv.Close()
	}
	if m != nil {
		m.Close()
	}
	// Last: whatever of the instance is left in it goes with its last
	// process.
	h.close()
}

// hostNet is the instance's network namespace, nil when it has none.
func (rt *Runtime) hostNet() *hostNet {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.net
}

// credential is the instance user's account for the processes started
// for them; nil when they run as the agent's own user.
func (rt *Runtime) credential() *syscall.Credential {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.account.Apply(nil).Credential
}

// JupyterMissing is what an instance that runs as host processes says
// when its host has no Jupyter.
const JupyterMissing = "Jupyter is not installed on this host (no jupyter-notebook, jupyter-lab or jupyter on the agent's PATH): " +
	"install it (Debian: apt-get install jupyter-notebook python3-ipykernel), or give the location an instance_image " +
	"so that instances run in a container of an image that has it"
