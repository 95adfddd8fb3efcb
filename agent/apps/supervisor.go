package apps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// App is an application to run and keep running.
type App struct {
	// Name is "jupyter" or a custom application's name; the log is
	// <LogDir>/<Name>.log, so it cannot hold a path separator.
	Name string
	// Command is the argv; a custom application's command is run as
	// {"/bin/bash", "-c", command}. It must stay in the foreground: an
	// exit, even after starting a daemon, counts as a crash.
	Command []string
	// Env is the application's own environment, after the supervisor's
	// BaseEnv (a custom application's environment_variables, say).
	Env []string
	// Port is where it listens (a custom application's endpoint target);
	// 0 picks a free port. Either way the application finds it in $PORT.
	Port int
	// HealthPath, when set, is an HTTP path that answers (below 400) once
	// the application is ready; HealthHeader ("Name: value") goes along.
	// Without it, accepting a TCP connection on the port tells.
	HealthPath, HealthHeader string
}

// AppStatus is where an application stands.
type AppStatus struct {
	Name string
	Port int
	// Addr is where it listens: 127.0.0.1:Port.
	Addr string
	// PID is the process of the current run (0 when none runs).
	PID int
	// Running says the process is alive.
	Running bool
	// Ready says the last health check passed.
	Ready bool
	// Restarts counts the runs after the first.
	Restarts int
	// LastExit says how the last run ended ("exited with code 1",
	// "killed by signal killed", "could not start: ..."); "" before any.
	LastExit string
	// Since is when Running last changed.
	Since time.Time
}

// SupervisorConfig configures a Supervisor.
type SupervisorConfig struct {
	// Home is the applications' working directory.
	Home string
	// LogDir receives <name>.log for each application: its output, and a
	// line at each start and end.
	LogDir string
	// BaseEnv is every application's environment before its own (the
	// agent's environment when nil). It carries SHOAL_NODE_ID and
	// SHOAL_NODE_DIR.
	BaseEnv []string
	// Logger receives starts, exits and readiness changes; none when nil.
	Logger *slog.Logger
	// Clock stamps AppStatus.Since; time.Now when nil.
	Clock func() time.Time
	// StopGrace is the time StopAll leaves an application between SIGTERM
	// and SIGKILL; 5 s when 0.
	StopGrace time.Duration
	// Credential is the OS account applications run as (the instance
	// user's); nil runs them as the agent's own user.
	Credential *syscall.Credential
	// Start starts an application's process, and Dial reaches it for its
	// health check: the instance's network namespace's when it has one
	// of its own (its loopback is not the host's); cmd.Start and the
	// host's network when nil.
	Start func(*exec.Cmd) error
	Dial  func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Restart backoff: an application that exits is started again after 1 s,
// then 2 s, 4 s... up to 30 s, so that one that crashes at once costs
// nothing; one that ran for resetAfter starts from 1 s again.
const (
	backoffFirst = time.Second
	backoffMax   = 30 * time.Second
	resetAfter   = time.Minute
)

// Supervisor runs applications, restarting those that exit, until StopAll.
type Supervisor struct {
	cfg    SupervisorConfig
	ctx    context.Context // cancelled by StopAll
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	apps    map[string]*running
	stopped bool
}

// running is an application's state; its fields after app and addr are
// guarded by Supervisor.mu.
type running struct {
	app  App
	addr string
	// tree marks the processes of every run of the application, so that
	// StopAll also ends what an earlier run left behind.
	tree string

	pid      int
	run      int // counts runs, so that a late probe of an old run is ignored
	alive    bool
	ready    bool
	restarts int
	lastExit string
	since    time.Time
}

// NewSupervisor returns a supervisor with no applications.
func NewSupervisor(cfg SupervisorConfig) *Supervisor {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = killGrace
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Supervisor{cfg: cfg, ctx: ctx, cancel: cancel, apps: map[string]*running{}}
}

// Start starts app in its own process group, in Home, with BaseEnv, Env
// and PORT, its output appended to <LogDir>/<name>.log, and keeps it
// running until StopAll. It fails only when app cannot be run at all; a
// command that fails to start is retried like one that exits.
func (s *Supervisor) Start(app App) error {
	switch {
	case app.Name == "" || app.Name == "." || app.Name == ".." || strings.ContainsAny(app.Name, `/\`+"\x00"):
		return fmt.Errorf("application name %q cannot name a log file", app.Name)
	case len(app.Command) == 0 || app.Command[0] == "":
		return fmt.Errorf("application %s has no command", app.Name)
	}
	if app.Port == 0 {
		p, err := FreePort()
		if err != nil {
			return fmt.Errorf("application %s: finding a free port: %w", app.Name, err)
		}
		app.Port = p
	}
	r := &running{app: app, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(app.Port)), tree: newTree(app.Name), since: s.cfg.Clock()}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return errors.New("the applications were stopped")
	case s.apps[app.Name] != nil:
		return fmt.Errorf("application %s runs already", app.Name)
	}
	s.apps[app.Name] = r
	// Under mu, so that StopAll's Wait cannot start before this Add.
	s.wg.Add(2)
	go s.keep(r)
	go s.probe(r)
	return nil
}

// keep runs r again and again, with backoff, until StopAll.
func (s *Supervisor) keep(r *running) {
	defer s.wg.Done()
	// Stopped while waiting to restart, or after a run that left
	// processes behind: those go too.
	defer stopTree(0, r.tree, s.cfg.StopGrace, nil)
	log := s.cfg.Logger.With("app", r.app.Name)
	backoff := backoffFirst
	for {
		began := time.Now()
		exit, stopped := s.runOnce(r)
		if stopped {
			return
		}
		if time.Since(began) >= resetAfter {
			backoff = backoffFirst // it ran a while: not a crash loop
		}
		log.Warn("application ended; restarting it", "exit", exit, "in", backoff)
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, backoffMax)
		s.mu.Lock()
		r.restarts++
		s.mu.Unlock()
	}
}

// runOnce runs r's process to its end and returns how it ended, or
// stopped when StopAll ended it (or came first).
func (s *Supervisor) runOnce(r *running) (exit string, stopped bool) {
	if s.ctx.Err() != nil {
		return "", true
	}
	ended := func(exit string) {
		s.mu.Lock()
		r.pid, r.alive, r.ready = 0, false, false
		r.lastExit, r.since = exit, s.cfg.Clock()
		s.mu.Unlock()
	}
	logf, err := os.OpenFile(filepath.Join(s.cfg.LogDir, r.app.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		exit = "could not start: " + err.Error()
		ended(exit)
		return exit, false
	}
	defer logf.Close()
	env := s.cfg.BaseEnv
	if env == nil {
		env = os.Environ()
	}
	env = append(append(append([]string{}, env...), r.app.Env...), "PORT="+strconv.Itoa(r.app.Port))
	cmd := command(r.app.Command, s.cfg.Home, env, r.tree, logf, s.cfg.Credential)
	fmt.Fprintf(logf, "== %s: starting %q on port %d at %s\n", r.app.Name, r.app.Command, r.app.Port, time.Now().UTC().Format(time.RFC3339))
	if err := startCmd(s.cfg.Start, cmd); err != nil {
		exit = "could not start: " + err.Error()
		fmt.Fprintf(logf, "== %s %s\n", r.app.Name, exit)
		ended(exit)
		return exit, false
	}
	pid := cmd.Process.Pid
	s.mu.Lock()
	r.pid, r.alive, r.ready, r.since = pid, true, false, s.cfg.Clock()
	r.run++
	s.mu.Unlock()
	s.cfg.Logger.Info("application started", "app", r.app.Name, "pid", pid, "port", r.app.Port)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// Whatever it left in its group would hold the port against the
		// next run. Processes it started in sessions of their own (a
		// notebook's kernels, a user's nohup'd job from a terminal) are
		// left running: StopAll ends them with the instance.
		killGroup(pid)
		exit = exitText(err)
		fmt.Fprintf(logf, "== %s %s at %s\n", r.app.Name, exit, time.Now().UTC().Format(time.RFC3339))
		ended(exit)
		return exit, false
	case <-s.ctx.Done():
		exit = exitText(stopTree(pid, r.tree, s.cfg.StopGrace, done))
		fmt.Fprintf(logf, "== %s stopped (%s) at %s\n", r.app.Name, exit, time.Now().UTC().Format(time.RFC3339))
		ended("stopped: " + exit)
		return exit, true
	}
}

// probe checks r's health until StopAll.
func (s *Supervisor) probe(r *running) {
	defer s.wg.Done()
	client := newHealthClient(s.cfg.Dial)
	wait := probeStarting
	for {
		t := time.NewTimer(wait)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.mu.Lock()
		alive, run := r.alive, r.run
		s.mu.Unlock()
		ok := alive && healthy(s.ctx, client, s.cfg.Dial, r.app, r.addr)
		s.mu.Lock()
		was := r.ready
		if r.run == run && r.alive {
			r.ready = ok
		}
		ready := r.ready
		s.mu.Unlock()
		if ready != was && s.ctx.Err() == nil {
			s.cfg.Logger.Info("application readiness changed", "app", r.app.Name, "ready", ready, "addr", r.addr)
		}
		wait = probeStarting
		if ready {
			wait = probeReady
		}
	}
}

// Status reports every application, by name.
func (s *Supervisor) Status() []AppStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]AppStatus, 0, len(s.apps))
	for _, r := range s.apps {
		out = append(out, AppStatus{
			Name: r.app.Name, Port: r.app.Port, Addr: r.addr, PID: r.pid,
			Running: r.alive, Ready: r.ready, Restarts: r.restarts, LastExit: r.lastExit, Since: r.since,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Running reports whether the named application's process is alive.
func (s *Supervisor) Running(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.apps[name]
	return r != nil && r.alive
}

// StopAll stops every application — SIGTERM to its process group and to
// every process of its run (kernels and terminals included), SIGKILL to
// what is left after StopGrace — and returns when they are gone. The
// supervisor starts nothing afterwards. Calling it again does nothing.
func (s *Supervisor) StopAll() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// FreePort returns a port free on 127.0.0.1 now. Another process could
// take it before the application does; the window is short, and the
// chosen port is kept across restarts so that the address reported for
// the application stays the same (a job's services use it too).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
