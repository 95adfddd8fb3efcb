package instance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shoal-ml/shoal/agent/apps"
	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/decide/instance/idle"
	"github.com/shoal-ml/shoal/domain/asset"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/netns"
	"github.com/shoal-ml/shoal/internal/procmark"
)

// Where an instance container keeps its user's things.
const (
	// boxHome is azureuser's home inside: the node's persistent home.
	boxHome = "/home/azureuser"
	// boxUser is azureuser's uid:gid in the instance image.
	boxUser = "1000:1000"
	// labelInstance marks an instance's container (workspace/name).
	labelInstance = "shoal.instance"
)

// boxInit is the container's first process: it waits for nothing and
// ends on SIGTERM (a bare sleep as pid 1 ignores it, and Stop would wait
// out its grace).
var boxInit = []string{"/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"}

// instanceBox is an instance's long-lived container.
type instanceBox struct {
	rt   container.Runtime
	ex   container.ExecRunner
	id   string
	task *node.InstanceContainer
	// hostUID is the host uid azureuser is in the container's user
	// namespace: its processes' owner as the host (and the app proxy's
	// owner check) sees them.
	hostUID int
	// pid is the container's first process on the host.
	pid int
	// subnet is the virtual network's container network the container
	// is on, nil when it has a network namespace of its own.
	subnet *node.ContainerNetwork
	// ownNet says the container's loopback is its own (a subnet's
	// network, or a namespace of its own): what listens there is
	// reached from inside its namespace (dial). False only on the
	// host's network (an engine that cannot give it one).
	ownNet bool
	// server is the agent's listener for the server's address on the
	// container's loopback (see serveServer).
	server net.Listener
}

// dial connects to addr on the container's network: its own namespace,
// else the host's, which it shares.
func (b *instanceBox) dial(ctx context.Context, addr string) (net.Conn, error) {
	if b.ownNet {
		return netns.Dial(ctx, b.pid, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// listening reports whether something answers on the container's
// loopback port.
func (b *instanceBox) listening(port int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := b.dial(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// httpClient is a client whose connections start on the container's
// network, for what the agent asks of its notebook and applications.
func (b *instanceBox) httpClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		Proxy:       nil, // an HTTP_PROXY of the host must not see the container's loopback
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return b.dial(ctx, addr) },
	}}
}

// ContainerID is the instance's container id and the engine's address
// (for the SSH server, which starts sessions inside it); empty when the
// instance runs as host processes.
func (rt *Runtime) ContainerID() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.box == nil {
		return ""
	}
	return rt.box.id
}

// startBox creates and starts the instance's container: the image, its
// size's limits, its GPUs only, the home bound at /home/azureuser, a
// network namespace of its own (the app proxy enters it to reach
// Jupyter and the applications) or its subnet's container network, and
// a user namespace of its own so that root inside is not root here.
func (rt *Runtime) startBox(ctx context.Context, t *node.InstanceTask) (*instanceBox, error) {
	if rt.n.Ctr == nil {
		return nil, errors.New("this node has no container engine")
	}
	// The engine reaches the insecure registries among the logins
	// before it is first asked (a lazily started podman starts with them).
	if err := rt.n.Ctr.EnsureInsecure(ctx, t.AppRegistries); err != nil {
		return nil, fmt.Errorf("the instance image %s: %w", t.Container.Image, err)
	}
	r, _, err := rt.n.Ctr.Runtime(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := r.(container.ExecRunner)
	if !ok {
		return nil, errors.New("this node's container engine cannot run processes inside a container")
	}
	c := t.Container
	// With the workspace's logins for its registry: an instance's own
	// image may be a private one. Pull uses a local copy, unless it came
	// with a login (the host's store is every workspace's): then the
	// registry is asked again with this workspace's.
	if _, err := rt.n.Ctr.Pull(ctx, r, ctrhost.ImageJob{Env: &asset.EnvironmentSpec{Image: c.Image},
		Task: &node.ContainerTask{Registries: t.AppRegistries}, Progress: func(string) {}}, c.Image); err != nil {
		return nil, fmt.Errorf("pulling the instance image %s: %w", c.Image, err)
	}
	if err := os.MkdirAll(rt.home, 0o700); err != nil {
		return nil, err
	}
	labels := rt.n.Ctr.NodeLabels(rt.n.NodeID)
	labels[labelInstance] = t.Workspace + "/" + t.Name
	// A container an earlier run of this agent left (killed before it
	// could stop it) goes first: its name is the one wanted.
	if left, err := r.List(ctx, labels); err == nil {
		for _, l := range left {
			_ = r.Remove(ctx, l.ID)
		}
	}
	// A namespace of its own (as a single-node job has): the host's
	// loopback, and what other users' work listens on there, out of
	// reach; two instances' applications on one port do not collide.
	network := container.NetworkOwn
	if n := t.Network; n != nil {
		// The subnet's network, internal when no public IP is asked: the
		// instance's processes reach its other members and nothing off
		// the host.
		nw, ok := r.(container.Networker)
		if !ok {
			return nil, fmt.Errorf("the instance is in virtual network %q, subnet %q, and this node's engine makes no networks", n.VNet, n.Subnet)
		}
		if err := nw.EnsureNetwork(ctx, n.Name, n.Internal, map[string]string{ctrhost.LabelNetwork: n.VNet + "/" + n.Subnet}); err != nil {
			return nil, fmt.Errorf("the subnet's network %s: %w", n.Name, err)
		}
		network = n.Name
	}
	spec := container.Spec{
		Name: "shoal-instance-" + rt.n.NodeID, Image: c.Image, Entrypoint: boxInit, User: boxUser,
		Network: network, Labels: labels, WorkingDir: boxHome,
		Mounts: []container.Mount{{Source: rt.home, Target: boxHome, Chown: true},
			// In a user namespace on the host's network the runtime may not
			// mount a sysfs of its own: the host's, read-only.
			{Source: "/sys", Target: "/sys", ReadOnly: true}},
		NanoCPUs: int64(c.VCPUs) * 1e9, MemoryBytes: int64(c.MemoryGB * (1 << 30)),
	}
	if rt.n.Ctr.Info().Engine == "podman" {
		spec.Userns = "auto"
	}
	// The first process carries the node's mark, as every process of
	// the instance does: on a subnet the app proxy enters the
	// container's network through it, and only through a process the
	// instance owns.
	spec.Env = map[string]string{}
	for _, kv := range procmark.Node(rt.n.NodeID, rt.n.WorkDir) {
		k, v, _ := strings.Cut(kv, "=")
		spec.Env[k] = v
	}
	devs, visible := ctrhost.GPUDevices(rt.n.GPUDevices, rt.n.Ctr.GPUs(ctx), files.Exists)
	spec.Devices = devs
	if visible != "" {
		spec.Env["CUDA_VISIBLE_DEVICES"], spec.Env["NVIDIA_VISIBLE_DEVICES"] = visible, visible
	}
	id, err := r.Run(ctx, spec)
	if err != nil {
		return nil, err
	}
	b := &instanceBox{rt: r, ex: ex, id: id, task: c, subnet: t.Network, ownNet: network != "host"}
	st, err := ex.State(ctx, id)
	if err == nil && !st.Running {
		err = errors.New("the container ended as it started")
	}
	if err == nil {
		b.pid = st.Pid
		b.hostUID, err = procUID(st.Pid)
	}
	if err == nil && b.ownNet {
		err = rt.serveServer(b)
	}
	if err == nil && !c.RootAccess {
		// enable_root_access: false: azureuser may not sudo.
		err = b.run(ctx, "0:0", nil, io.Discard, "/bin/sh", "-c", "rm -f /etc/sudoers.d/azureuser; ! grep -rqs azureuser /etc/sudoers /etc/sudoers.d")
	}
	if err != nil {
		_ = r.Remove(context.WithoutCancel(ctx), id)
		return nil, err
	}
	return b, nil
}

// run runs argv in the container as user and fails unless it exits 0.
func (b *instanceBox) run(ctx context.Context, user string, env map[string]string, out io.Writer, argv ...string) error {
	code, err := b.ex.ExecWait(ctx, b.id, container.ExecOptions{Command: argv, User: user, Env: env, WorkingDir: boxHome, Stdout: out, Stderr: out})
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%s exited with %d", strings.Join(argv, " "), code)
	}
	return nil
}

// remove stops and removes the container (its home stays on the node).
func (b *instanceBox) remove(ctx context.Context) error {
	if b.server != nil {
		_ = b.server.Close()
	}
	return b.rt.Remove(ctx, b.id)
}

// serveServer listens on the container's loopback at the server's
// address, when the agent reaches the server on its own loopback, and
// relays there: the instance's SDKs find the server at its advertised
// URL (AZUREML_DEV_URL_MFE), as on the host's network.
func (rt *Runtime) serveServer(b *instanceBox) error {
	if rt.n.SDKEnv == nil {
		return nil
	}
	addr := netns.LoopbackAddr(rt.n.SDKEnv()["AZUREML_DEV_URL_MFE"])
	if addr == "" {
		return nil
	}
	ln, err := netns.Listen(b.pid, "tcp", addr)
	if err != nil {
		return fmt.Errorf("the server's address %s in the container's network: %w", addr, err)
	}
	b.server = ln
	go netns.Relay(ln, addr)
	return nil
}

// boxEnv is the environment of the instance's processes inside: the
// instance's variables (identity endpoint included: the host's network
// reaches it) with the container's home, and none of the host's path.
func (rt *Runtime) boxEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range rt.env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range []string{"PATH", "SHELL"} {
		delete(env, k)
	}
	env["HOME"], env["USER"], env["LOGNAME"] = boxHome, compute.InstanceAdminUsername, compute.InstanceAdminUsername
	return env
}

// runScriptInBox runs a setup script inside the container as azureuser,
// its output appended to the setup log, within its timeout.
func (rt *Runtime) runScriptInBox(ctx context.Context, b *instanceBox, s apps.Script, logPath string) error {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s: opening its log: %w", s.Name, err)
	}
	defer log.Close()
	var argv []string
	switch {
	case s.Path != "":
		p := s.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(boxHome, p)
		}
		argv = []string{"/bin/bash", p}
	case strings.TrimSpace(s.Command) != "":
		argv = []string{"/bin/bash", "-c", s.Command}
	default:
		return fmt.Errorf("%s has neither a path nor a command", s.Name)
	}
	fmt.Fprintf(log, "== %s in the instance's container: %s (timeout %s), started %s\n", s.Name, strings.Join(argv, " "), s.Timeout, rt.n.Clock.Now().UTC().Format(time.RFC3339))
	sctx := ctx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	// The exec's processes carry the mark; a timed-out script's tree is
	// ended by the kill below (the engine has no exec kill).
	env := rt.boxEnv()
	env["SHOAL_SETUP_SCRIPT"] = s.Name
	code, err := b.ex.ExecWait(sctx, b.id, container.ExecOptions{Command: argv, User: boxUser, Env: env, WorkingDir: boxHome, Stdout: log, Stderr: log})
	if sctx.Err() != nil && ctx.Err() == nil {
		_ = b.run(context.WithoutCancel(ctx), "0:0", nil, io.Discard, "/bin/sh", "-c", "for p in /proc/[0-9]*; do grep -qsz '^SHOAL_SETUP_SCRIPT=' $p/environ && kill -KILL ${p#/proc/}; done; true")
		err = fmt.Errorf("%s ran past its timeout of %s", s.Name, s.Timeout)
	}
	if err == nil && code != 0 {
		err = fmt.Errorf("%s exited with %d (its output is in the setup log)", s.Name, code)
	}
	if err != nil {
		fmt.Fprintf(log, "== %s failed: %v\n", s.Name, err)
		return err
	}
	fmt.Fprintf(log, "== %s done\n", s.Name)
	return nil
}

// startJupyterInBox starts the notebook inside the container as
// azureuser on its loopback's port.
func (rt *Runtime) startJupyterInBox(ctx context.Context, b *instanceBox, port int, baseURL, token string) error {
	app := apps.JupyterApp("jupyter", port, baseURL, token, boxHome)
	env := rt.boxEnv()
	for _, kv := range app.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	// Its log stays inside (the container's /tmp): the home is the
	// user's.
	argv := append([]string{"/bin/sh", "-c", `exec "$@" >>/tmp/jupyter.log 2>&1`, "sh"}, app.Command...)
	_, err := b.ex.ExecWait(ctx, b.id, container.ExecOptions{Command: argv, User: boxUser, Env: env, WorkingDir: boxHome, Detach: true})
	return err
}

// boxCPUTicks is the container's CPU time in clock ticks (the unit of
// the host processes' sample); false when the engine did not say.
func boxCPUTicks(ctx context.Context, b *instanceBox) (uint64, bool) {
	st, err := b.ex.State(ctx, b.id)
	if err != nil {
		return 0, false
	}
	return st.CPUNanos / (1e9 / clockTicks), true
}

// procUID is a host process's real uid.
func procUID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			return strconv.Atoi(f[1])
		}
	}
	return -1, fmt.Errorf("no Uid in /proc/%d/status", pid)
}

// startBoxApps starts what the instance serves from inside its
// container: the notebook (custom applications with a command run on the
// host's side only when the instance is not a container).
func (rt *Runtime) startBoxApps(t *node.InstanceTask, b *instanceBox, log interface{ Warn(string, ...any) }) {
	if t.NotebookToken != "" {
		port := files.ReadPort(filepath.Join(rt.dir, jupyterPortFile))
		if port == 0 || !portFree(nil, port) {
			if p, err := anyFreePort(); err == nil {
				port = p
			}
		}
		_ = os.WriteFile(filepath.Join(rt.dir, jupyterPortFile), []byte(strconv.Itoa(port)), 0o600)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := rt.startJupyterInBox(ctx, b, port, t.JupyterBaseURL, t.NotebookToken)
		cancel()
		if err != nil {
			log.Warn("starting Jupyter in the instance's container failed", "err", err)
		} else {
			rt.mu.Lock()
			rt.jupyterPort = port
			rt.jupyter = &idle.Jupyter{BaseURL: "http://127.0.0.1:" + strconv.Itoa(port) + t.JupyterBaseURL, Token: t.NotebookToken, HTTP: b.httpClient(10 * time.Second)}
			rt.mu.Unlock()
		}
	}
	// Applications from images run beside the container in its network
	// namespace, shared; a command alone is
	// refused at create for an instance that runs in a container.
	logDir := filepath.Join(rt.dir, "app-logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		log.Warn("the applications' log folder", "err", err)
	}
	shipping := rt.shipAppLogs(t, logDir)
	images := rt.startImageApps(t, logDir, b)
	rt.mu.Lock()
	rt.images, rt.appLogs = images, shipping
	rt.mu.Unlock()
	for _, app := range t.Apps {
		if app.Image == nil {
			log.Warn("a command application does not run in an instance's container (give it an image)", "app", app.Name)
		}
	}
}
