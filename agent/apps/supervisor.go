package apps

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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
	Name    string
	Command []string // argv
	Env     []string
	// Port is where it listens (a custom app's endpoint target); 0 picks
	// a free port, passed in $PORT.
	Port int
	// HealthPath, when set, is an HTTP path that answers once the app is
	// ready (with HealthHeader, "Name: value", sent along); otherwise a
	// TCP connection tells.
	HealthPath, HealthHeader string
}

// AppStatus is where an application stands.
type AppStatus struct {
	Name     string
	Addr     string
	Running  bool
	Ready    bool
	Restarts int
	LastExit string
}

// SupervisorConfig configures a Supervisor.
type SupervisorConfig struct {
	// Home is the applications' working directory.
	Home string
	// LogDir receives <name>.log for each application.
	LogDir string
	// BaseEnv is every application's environment before its own.
	BaseEnv []string
	Logger  *slog.Logger
}

// Supervisor runs applications and restarts those that exit, with
// backoff (1 s doubling to 30 s).
type Supervisor struct {
	cfg    SupervisorConfig
	ctx    context.Context
	cancel context.CancelFunc

	mu   sync.Mutex
	apps map[string]*running
	wg   sync.WaitGroup
}

type running struct {
	app      App
	addr     string
	pid      int
	alive    bool
	ready    bool
	restarts int
	lastExit string
}

// NewSupervisor returns a supervisor with no applications.
func NewSupervisor(cfg SupervisorConfig) *Supervisor {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Supervisor{cfg: cfg, ctx: ctx, cancel: cancel, apps: map[string]*running{}}
}

// Start starts app and keeps it running until StopAll.
func (s *Supervisor) Start(app App) error {
	if app.Port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		app.Port = p
	}
	r := &running{app: app, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(app.Port))}
	s.mu.Lock()
	if _, ok := s.apps[app.Name]; ok {
		s.mu.Unlock()
		return fmt.Errorf("application %s runs already", app.Name)
	}
	s.apps[app.Name] = r
	s.mu.Unlock()
	s.wg.Add(2)
	go s.keep(r)
	go s.probe(r)
	return nil
}

// keep runs r's process, again and again while the supervisor runs.
func (s *Supervisor) keep(r *running) {
	defer s.wg.Done()
	backoff := time.Second
	for s.ctx.Err() == nil {
		started := time.Now()
		err := s.runOnce(r)
		if s.ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		r.alive, r.ready = false, false
		r.restarts++
		r.lastExit = fmt.Sprint(err)
		s.mu.Unlock()
		s.cfg.Logger.Warn("application exited; restarting", "app", r.app.Name, "err", err, "in", backoff)
		if time.Since(started) > time.Minute {
			backoff = time.Second // it ran a while: not a crash loop
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

func (s *Supervisor) runOnce(r *running) error {
	logf, err := os.OpenFile(filepath.Join(s.cfg.LogDir, r.app.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(r.app.Command[0], r.app.Command[1:]...)
	cmd.Dir = s.cfg.Home
	cmd.Env = append(append(append([]string{}, s.cfg.BaseEnv...), r.app.Env...), "PORT="+strconv.Itoa(r.app.Port))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.mu.Lock()
	r.pid, r.alive = cmd.Process.Pid, true
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return err
	case <-s.ctx.Done():
		_ = stopGroup(cmd.Process.Pid, done)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return s.ctx.Err()
	}
}

// probe checks every second whether r answers.
func (s *Supervisor) probe(r *running) {
	defer s.wg.Done()
	client := &http.Client{Timeout: 2 * time.Second}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		alive := r.alive
		s.mu.Unlock()
		ok := false
		if alive {
			ok = answers(client, r)
		}
		s.mu.Lock()
		r.ready = ok && r.alive
		s.mu.Unlock()
	}
}

func answers(client *http.Client, r *running) bool {
	if r.app.HealthPath == "" {
		c, err := net.DialTimeout("tcp", r.addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+r.addr+r.app.HealthPath, nil)
	if err != nil {
		return false
	}
	if k, v, ok := strings.Cut(r.app.HealthHeader, ":"); ok {
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode < 500
}

// Status reports every application, by name.
func (s *Supervisor) Status() []AppStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]AppStatus, 0, len(s.apps))
	for _, r := range s.apps {
		out = append(out, AppStatus{Name: r.app.Name, Addr: r.addr, Running: r.alive, Ready: r.ready, Restarts: r.restarts, LastExit: r.lastExit})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Running reports whether the named application's process runs.
func (s *Supervisor) Running(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.apps[name]
	return r != nil && r.alive
}

// StopAll stops every application (SIGTERM to its process group, SIGKILL
// after a grace) and waits for them.
func (s *Supervisor) StopAll() {
	s.cancel()
	s.wg.Wait()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
