package rank

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shoal-ml/shoal/agent/apps"
	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/runner"
	"github.com/shoal-ml/shoal/domain/job/interactive"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/internal/netns"
)

// A job's services on this node (AgentTask.Services): the agent starts
// the known programs beside the rank's processes — same account, same
// environment, same network — and watches each service's port, reporting
// them in the rank's Running reports whenever one changes (it listens,
// it failed), with what the server's application proxy checks at each
// dial: the account, the container or the network namespace whose
// process must hold the listener.

// servicePollEvery is how often the agent looks whether a service
// listens.
const servicePollEvery = time.Second

// rankServices are a rank's services while it runs.
type rankServices struct {
	r     *Rank
	insts []interactive.ServiceInstance
	// dial reaches an address in the rank's network.
	dial func(ctx context.Context, addr string) (net.Conn, error)
	// ctx is the rank's, while it runs.
	ctx   context.Context
	mu    sync.Mutex
	procs []*exec.Cmd
	// servers are the SSH servers of ssh services.
	servers []io.Closer
	// exited says why a program started for a service ended, by
	// service name.
	exited map[string]string
}

// exitedWith records that the program of service st ended with err:
// said on the service (its output is the agent's, beside the rank's log,
// where it may hold the token).
func (s *rankServices) exitedWith(st node.ServiceTask, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited == nil {
		s.exited = map[string]string{}
	}
	s.exited[st.Name] = fmt.Sprintf("%s exited while the job runs (%v): it may not run in the job's environment", programOf(st.Type), err)
}

// exitedWhy says why the program of service name ended, "" while it
// runs (or when it has none).
func (s *rankServices) exitedWhy(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited[name]
}

// serveServices starts the rank's services and watches them until ctx
// ends or the rank's processes do; the returned func stops the programs
// it started. task is the rank's (its environment and account), crun its
// containers when it runs in one.
func (r *Rank) serveServices(ctx context.Context, task runner.Task, run rankProcs, crun *ctrhost.Run) (stop func()) {
	if len(r.t.Services) == 0 {
		return func() {}
	}
	s := &rankServices{r: r, ctx: ctx}
	owner := interactive.ServiceInstance{}
	if r.account != nil && task.Credential != nil {
		uid := int(task.Credential.Uid)
		owner.UID = &uid
	}
	switch {
	case crun != nil:
		// The rank's first container: its processes hold the listener,
		// in its network (the host's, or one of its own).
		if ids := crun.IDs(); len(ids) > 0 {
			owner.ContainerID = ids[0]
			if rt, _, err := r.n.Ctr.Runtime(ctx); err == nil {
				if p, ok := rt.(container.PIDer); ok {
					owner.ContainerPID, _ = p.ContainerPID(ctx, ids[0])
				}
			}
			owner.NetNSPID = owner.ContainerPID
		}
		pid := owner.NetNSPID
		s.dial = func(ctx context.Context, addr string) (net.Conn, error) { return netns.Dial(ctx, pid, "tcp", addr) }
	case r.netNS != nil:
		if h, ok := run.(*runner.Run); ok && len(h.Pids()) > 0 {
			owner.NetNSPID = h.Pids()[0]
		}
		ns := r.netNS
		s.dial = func(ctx context.Context, addr string) (net.Conn, error) { return ns.Dial(ctx, "tcp", addr) }
	default:
		d := &net.Dialer{}
		s.dial = func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	}
	for _, st := range r.t.Services {
		in := owner
		in.Name, in.Type, in.Port, in.Status = st.Name, st.Type, st.Port, interactive.ServiceStatusStarting
		var err error
		switch st.Type {
		case interactive.ServiceCustom:
		case interactive.ServiceSSH:
			err = s.startSSH(st, &in, task, crun)
		default:
			err = s.start(st, &in, task, crun)
		}
		if err != nil {
			in.Status, in.Error, in.Addr = interactive.ServiceStatusFailed, err.Error(), ""
			r.appendLog(task.LogPath, fmt.Sprintf("shoal agent: service %s (%s) did not start: %v\n", st.Name, st.Type, err))
		}
		if in.Status != interactive.ServiceStatusFailed && in.Addr == "" {
			in.Addr = "127.0.0.1:" + strconv.Itoa(in.Port)
		}
		s.insts = append(s.insts, in)
	}
	watchCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.watch(watchCtx, run)
	}()
	return func() {
		cancel()
		<-done
		s.stopAll()
	}
}

// watch reports the services now, then whenever one starts or stops
// listening.
func (s *rankServices) watch(ctx context.Context, run rankProcs) {
	for first := true; ; first = false {
		changed := false
		for i := range s.insts {
			in := &s.insts[i]
			if in.Status == interactive.ServiceStatusFailed || in.Type == interactive.ServiceSSH {
				continue // an ssh service is the agent's own server
			}
			if why := s.exitedWhy(in.Name); why != "" {
				in.Status, in.Error, in.Addr, changed = interactive.ServiceStatusFailed, why, "", true
				continue
			}
			st := interactive.ServiceStatusStarting
			dctx, cancel := context.WithTimeout(ctx, servicePollEvery)
			if c, err := s.dial(dctx, in.Addr); err == nil {
				c.Close()
				st = interactive.ServiceStatusRunning
			}
			cancel()
			if st != in.Status {
				in.Status, changed = st, true
			}
		}
		if changed || first {
			out := make([]interactive.ServiceInstance, len(s.insts))
			copy(out, s.insts)
			s.r.report(ctx, &node.RankReport{State: node.RankRunning, Services: out})
		}
		select {
		case <-ctx.Done():
			return
		case <-run.Done():
			return
		case <-time.After(servicePollEvery):
		}
	}
}

// start starts a known service's program (Jupyter Lab, TensorBoard,
// code-server) beside the rank, or says why it cannot: its program is not
// in the job's environment, or it would be reachable by others.
func (s *rankServices) start(st node.ServiceTask, in *interactive.ServiceInstance, task runner.Task, crun *ctrhost.Run) error {
	env := runner.Environ(task)
	path := envValue(env, "PATH")
	look := func(name string) string { return lookIn(path, name) }
	var ex container.Execer
	if crun != nil {
		var err error
		if ex, look, err = s.containerLook(task, crun); err != nil {
			return err
		}
	}
	argv, err := serviceCommand(st, task.Dir, look)
	if err != nil {
		return err
	}
	ownNetwork := s.r.netNS != nil || crun != nil && s.r.t.NodeCount == 1
	if st.Type != interactive.ServiceJupyterLab && !ownNetwork {
		// TensorBoard and code-server take no token: on the host's
		// loopback any process of the node could reach them.
		return fmt.Errorf("%s has no login of its own and this node runs the job on the host's network, where every process of the node could reach it: it runs only for jobs with a network of their own (a single-node job in a container, or on an agent running as root)", programOf(st.Type))
	}
	if st.Type == interactive.ServiceJupyterLab && st.Token == "" {
		return fmt.Errorf("the server has no secrets key, which Jupyter's token is made from: ask its operator to configure one")
	}
	if in.Port == 0 {
		if in.Port, err = apps.FreePort(); err != nil {
			return fmt.Errorf("no free port for %s: %v", programOf(st.Type), err)
		}
	}
	argv = withPort(st, argv, in.Port)
	if ex != nil {
		return s.execInContainer(ex, crun.IDs()[0], st, argv, task)
	}
	logPath := filepath.Join(filepath.Dir(task.LogPath), "service_"+st.Name+".txt")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Dir: task.Dir, Stdout: lf, Stderr: lf,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: task.Credential}}
	// The token goes in the environment, which only the job's account
	// can read: every user of the host can read a process's arguments.
	cmd.Env = append(env, "JUPYTER_TOKEN="+st.Token)
	if s.r.netNS != nil {
		err = s.r.netNS.Start(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return fmt.Errorf("starting %s: %v", programOf(st.Type), err)
	}
	go func() { s.exitedWith(st, cmd.Wait()) }()
	s.mu.Lock()
	s.procs = append(s.procs, cmd)
	s.mu.Unlock()
	return nil
}

// stopAll ends the programs started (their process groups).
func (s *rankServices) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.procs {
		if c.Process != nil {
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
	}
	for _, srv := range s.servers {
		_ = srv.Close()
	}
	s.procs, s.servers = nil, nil
}

// programOf names the program of a known service type.
func programOf(typ string) string {
	switch typ {
	case interactive.ServiceJupyterLab:
		return "Jupyter Lab"
	case interactive.ServiceTensorBoard:
		return "TensorBoard"
	case interactive.ServiceVSCode:
		return "code-server (VS Code)"
	case interactive.ServiceSSH:
		return "an SSH server"
	}
	return typ
}

// serviceCommand is the command of a known service, its port still to
// set (withPort), its program found by look (on the job's PATH), or an
// error that says the program is missing from the job's environment.
func serviceCommand(st node.ServiceTask, dir string, look func(name string) string) ([]string, error) {
	base := "/" + strings.Trim(st.BaseURL, "/") + "/"
	switch st.Type {
	case interactive.ServiceJupyterLab:
		// Jupyter Lab, else the classic Notebook server (Debian ships
		// no JupyterLab): both serve the job's folder under the proxy's
		// path, accepting only the server's token.
		if p := look("jupyter-lab"); p != "" {
			return []string{p, "--no-browser", "--ip=127.0.0.1", "--port-retries=0", "--ServerApp.password=",
				"--ServerApp.base_url=" + base, "--ServerApp.root_dir=" + dir, "--ServerApp.trust_xheaders=True"}, nil
		}
		if p := look("jupyter-notebook"); p != "" {
			return []string{p, "--no-browser", "--ip=127.0.0.1", "--port-retries=0", "--NotebookApp.password=",
				"--NotebookApp.base_url=" + base, "--NotebookApp.notebook_dir=" + dir, "--NotebookApp.trust_xheaders=True"}, nil
		}
		return nil, fmt.Errorf("the job's environment has no Jupyter Lab (jupyter-lab) nor Jupyter Notebook (jupyter-notebook) on its PATH: add jupyterlab to the environment")
	case interactive.ServiceTensorBoard:
		p := look("tensorboard")
		if p == "" {
			return nil, fmt.Errorf("the job's environment has no tensorboard on its PATH: add tensorboard to the environment")
		}
		logDir := dir
		if st.LogDir != "" {
			logDir = filepath.Join(dir, filepath.Clean("/"+st.LogDir))
		}
		return []string{p, "--logdir", logDir, "--host", "127.0.0.1", "--path_prefix", strings.TrimRight(base, "/")}, nil
	case interactive.ServiceVSCode:
		p := look("code-server")
		if p == "" {
			return nil, fmt.Errorf("the job's environment has no code-server on its PATH: add code-server to the environment")
		}
		return []string{p, "--auth", "none", "--disable-telemetry", dir}, nil
	}
	return nil, fmt.Errorf("unknown service type %q", st.Type)
}

// withPort adds the port to a known service's command.
func withPort(st node.ServiceTask, argv []string, port int) []string {
	p := strconv.Itoa(port)
	switch st.Type {
	case interactive.ServiceVSCode:
		return append(argv[:1], append([]string{"--bind-addr", "127.0.0.1:" + p}, argv[1:]...)...)
	case interactive.ServiceTensorBoard:
		return append(argv, "--port", p)
	default:
		return append(argv, "--port="+p)
	}
}

// lookIn finds an executable named name in the folders of path.
func lookIn(path, name string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// envValue is the value of key in a KEY=value list.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}
