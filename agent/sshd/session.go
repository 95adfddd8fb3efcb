package sshd

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/creack/pty"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// session is one "session" channel: a shell, a command or sftp.
type session struct {
	s   *Server
	ch  ssh.Channel
	env []string

	mu      sync.Mutex
	term    string
	winsize *pty.Winsize
	ptyFile *os.File
	cmd     *exec.Cmd
	started bool
}

// serveSession answers a session channel's requests until it closes.
func (s *Server) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	sess := &session{s: s, ch: ch}
	s.mu.Lock()
	s.procs[sess] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.procs, sess)
		s.mu.Unlock()
		sess.kill()
	}()
	for req := range reqs {
		ok := false
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			if ssh.Unmarshal(req.Payload, &kv) == nil && allowedEnv(kv.Name) {
				sess.env = append(sess.env, kv.Name+"="+kv.Value)
				ok = true
			}
		case "pty-req":
			var p struct {
				Term          string
				Cols, Rows    uint32
				Width, Height uint32
				Modes         string
			}
			if ssh.Unmarshal(req.Payload, &p) == nil {
				sess.mu.Lock()
				sess.term, sess.winsize = p.Term, &pty.Winsize{Cols: uint16(p.Cols), Rows: uint16(p.Rows)}
				sess.mu.Unlock()
				ok = true
			}
		case "window-change":
			var w struct{ Cols, Rows, Width, Height uint32 }
			if ssh.Unmarshal(req.Payload, &w) == nil {
				sess.resize(uint16(w.Cols), uint16(w.Rows))
				ok = true
			}
		case "shell", "exec":
			var command string
			if req.Type == "exec" {
				var p struct{ Command string }
				if ssh.Unmarshal(req.Payload, &p) != nil {
					break
				}
				command = p.Command
			}
			ok = sess.start(func() { sess.run(command) })
		case "subsystem":
			var p struct{ Name string }
			if ssh.Unmarshal(req.Payload, &p) == nil && p.Name == "sftp" {
				ok = sess.start(sess.sftp)
			}
		case "signal":
			var p struct{ Signal string }
			if ssh.Unmarshal(req.Payload, &p) == nil {
				sess.signal(p.Signal)
				ok = true
			}
		}
		if req.WantReply {
			_ = req.Reply(ok, nil)
		}
	}
}

// allowedEnv says which variables a client may set, as OpenSSH's
// default AcceptEnv does (locale), plus TERM-like harmless ones.
func allowedEnv(name string) bool {
	return name == "LANG" || strings.HasPrefix(name, "LC_") || name == "TZ" || name == "COLORTERM"
}

// start runs fn once per session.
func (sess *session) start(fn func()) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.started {
		return false
	}
	sess.started = true
	go fn()
	return true
}

// environ is the session's environment.
func (sess *session) environ() []string {
	cfg := sess.s.cfg
	env := []string{
		"HOME=" + cfg.HomeDir, "USER=" + cfg.Username, "LOGNAME=" + cfg.Username, "SHELL=" + cfg.Shell,
		"PATH=" + envOr("PATH", "/usr/local/bin:/usr/bin:/bin"),
	}
	if v := os.Getenv("LANG"); v != "" {
		env = append(env, "LANG="+v)
	}
	if cfg.Env != nil {
		env = append(env, cfg.Env()...)
	}
	sess.mu.Lock()
	if sess.term != "" {
		env = append(env, "TERM="+sess.term)
	}
	sess.mu.Unlock()
	return append(env, sess.env...)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// run runs a command (or a login shell when command is empty) and sends
// its exit status.
func (sess *session) run(command string) {
	cfg := sess.s.cfg
	var cmd *exec.Cmd
	if command == "" {
		cmd = exec.Command(cfg.Shell, "-l")
	} else {
		cmd = exec.Command(cfg.Shell, "-c", command)
	}
	cmd.Dir, cmd.Env = cfg.HomeDir, sess.environ()
	sess.mu.Lock()
	ws := sess.winsize
	sess.mu.Unlock()
	var err error
	if ws != nil {
		err = sess.runPTY(cmd, ws)
	} else {
		err = sess.runPipes(cmd)
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			_, _ = sess.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
				Signal     string
				CoreDumped bool
				Msg, Lang  string
			}{Signal: signalName(st.Signal())}))
			sess.ch.Close()
			return
		}
		code = ee.ExitCode()
	default:
		_, _ = io.WriteString(sess.ch.Stderr(), "shoal sshd: "+err.Error()+"\n")
		code = 127
	}
	status := make([]byte, 4)
	binary.BigEndian.PutUint32(status, uint32(code))
	_, _ = sess.ch.SendRequest("exit-status", false, status)
	sess.ch.Close()
}

// runPTY runs cmd on a new terminal in its own session.
func (sess *session) runPTY(cmd *exec.Cmd, ws *pty.Winsize) error {
	f, err := pty.StartWithSize(cmd, ws)
	if err != nil {
		return err
	}
	sess.mu.Lock()
	sess.ptyFile, sess.cmd = f, cmd
	sess.mu.Unlock()
	go func() {
		_, _ = io.Copy(f, activity{sess.s, sess.ch})
	}()
	_, _ = io.Copy(activityWriter{sess.s, sess.ch}, f) // ends with EIO when the shell exits
	err = cmd.Wait()
	f.Close()
	return err
}

// runPipes runs cmd with the channel as stdin, stdout and stderr, in its
// own process group.
func (sess *session) runPipes(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	sess.mu.Lock()
	sess.cmd = cmd
	sess.mu.Unlock()
	go func() {
		_, _ = io.Copy(stdin, activity{sess.s, sess.ch})
		stdin.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, _ = io.Copy(activityWriter{sess.s, sess.ch}, stdout) }()
	go func() { defer wg.Done(); _, _ = io.Copy(sess.ch.Stderr(), stderr) }()
	wg.Wait()
	return cmd.Wait()
}

// sftp serves the sftp subsystem from the home directory (which is also
// where scp, which speaks sftp in OpenSSH 9, puts files).
func (sess *session) sftp() {
	srv, err := sftp.NewServer(activityRW{sess.s, sess.ch}, sftp.WithServerWorkingDirectory(sess.s.cfg.HomeDir))
	if err != nil {
		sess.ch.Close()
		return
	}
	err = srv.Serve()
	code := 0
	if err != nil && !errors.Is(err, io.EOF) {
		code = 1
	}
	status := make([]byte, 4)
	binary.BigEndian.PutUint32(status, uint32(code))
	_, _ = sess.ch.SendRequest("exit-status", false, status)
	srv.Close()
	sess.ch.Close()
}

func (sess *session) resize(cols, rows uint16) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.winsize != nil {
		sess.winsize.Cols, sess.winsize.Rows = cols, rows
	}
	if sess.ptyFile != nil {
		_ = pty.Setsize(sess.ptyFile, &pty.Winsize{Cols: cols, Rows: rows})
	}
}

// kill ends the session's processes: its whole process group.
func (sess *session) kill() {
	sess.mu.Lock()
	cmd := sess.cmd
	sess.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}

var signals = map[string]syscall.Signal{
	"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}

func (sess *session) signal(name string) {
	sig, ok := signals[name]
	if !ok {
		return
	}
	sess.mu.Lock()
	cmd := sess.cmd
	sess.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}

func signalName(sig syscall.Signal) string {
	for n, s := range signals {
		if s == sig {
			return n
		}
	}
	return "KILL"
}

func defaultShell() string {
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// activity and friends note data moving on a channel as activity.
type activity struct {
	s *Server
	r io.Reader
}

func (a activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.touch()
	}
	return n, err
}

type activityWriter struct {
	s *Server
	w io.Writer
}

func (a activityWriter) Write(p []byte) (int, error) {
	a.s.touch()
	return a.w.Write(p)
}

type activityRW struct {
	s  *Server
	ch ssh.Channel
}

func (a activityRW) Read(p []byte) (int, error) {
	n, err := a.ch.Read(p)
	if n > 0 {
		a.s.touch()
	}
	return n, err
}

func (a activityRW) Write(p []byte) (int, error) { a.s.touch(); return a.ch.Write(p) }
func (a activityRW) Close() error                { return a.ch.Close() }
