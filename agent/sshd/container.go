package sshd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shoal-ml/shoal/agent/container"
)

// ContainerTarget is a running container that sessions enter: an
// instance that is a container. Shells, commands, SFTP and legacy scp
// run in it as User through the engine's exec, and -L forwards dial
// from inside its network namespace.
type ContainerTarget struct {
	// Runtime is the engine that runs the container, on this host (the
	// server signals the processes by their host ids).
	Runtime container.Execer
	// ID is the container's id or name.
	ID string
	// User is the account in the image that sessions run as; default
	// Config.Username (azureuser).
	User string
	// Home is the user's home inside the container, where sessions start
	// and HOME; default /home/<User>.
	Home string
}

// pickShell runs bash where the image has it, else sh, with the
// arguments given (a login shell's -l, or -c and a command): the image's
// shells are not visible from the host.
const pickShell = `if [ -x /bin/bash ]; then exec /bin/bash "$@"; else exec /bin/sh "$@"; fi`

// sftpServers are where images keep OpenSSH's sftp-server (Debian's
// openssh-sftp-server, Alpine, Fedora).
var sftpServers = []string{"/usr/lib/openssh/sftp-server", "/usr/lib/sftp-server", "/usr/libexec/sftp-server", "/usr/libexec/openssh/sftp-server"}

// findSFTP runs the image's sftp-server, or says that it has none.
var findSFTP = `for p in ` + strings.Join(sftpServers, " ") + `; do [ -x "$p" ] && exec "$p"; done
echo "shoal sshd: the instance's image has no sftp-server (looked for ` + strings.Join(sftpServers, ", ") +
	`): install OpenSSH's sftp server in the image (Debian: openssh-sftp-server) for sftp and scp" >&2; exit 127`

// ctrProgram is a shell, command or sftp-server started in the container.
type ctrProgram struct {
	p   container.Process
	pid int // on this host; 0 when the engine did not tell
}

// containerDefaults fills the target's defaults.
func containerDefaults(cfg *Config) error {
	t := *cfg.Container // the caller's stays as it was
	cfg.Container = &t
	if t.Runtime == nil || t.ID == "" {
		return errors.New("sshd: Container needs a Runtime and a container ID")
	}
	if t.User == "" {
		t.User = cfg.Username
	}
	if t.Home == "" {
		t.Home = "/home/" + t.User
	}
	if !strings.HasPrefix(t.Home, "/") {
		return errors.New("sshd: Container.Home " + strconv.Quote(t.Home) + " must be an absolute path")
	}
	cfg.HomeDir = t.Home
	return nil
}

// containerEnviron is a container session's environment: the image's
// own (PATH, LANG) is kept, and the session's variables come on top.
func (sess *session) containerEnviron() []string {
	cfg := sess.s.cfg
	env := append([]string{}, cfg.Env()...)
	env = append(env, sess.env...)
	client, _, _ := net.SplitHostPort(sess.c.RemoteAddr().String())
	clientPort := portOf(sess.c.RemoteAddr())
	server, serverPort := hostOf(sess.c.LocalAddr()), portOf(sess.c.LocalAddr())
	env = append(env,
		"HOME="+cfg.Container.Home, "USER="+cfg.Container.User, "LOGNAME="+cfg.Container.User,
		"SSH_CLIENT="+client+" "+clientPort+" "+serverPort,
		"SSH_CONNECTION="+client+" "+clientPort+" "+server+" "+serverPort,
	)
	if sess.winsize != nil {
		term := sess.term
		if term == "" {
			term = "dumb"
		}
		env = append(env, "TERM="+term)
	}
	return env
}

// launchInContainer starts argv in the container as the target's user,
// in its home, on a terminal if the client asked for one and tty is
// true. The caller holds sess.mu.
func (sess *session) launchInContainer(argv []string, tty bool) (*ctrProgram, error) {
	t := sess.s.cfg.Container
	spec := container.ExecSpec{Command: argv, User: t.User, Env: sess.containerEnviron(), WorkingDir: t.Home}
	if tty && sess.winsize != nil {
		spec.TTY, spec.Cols, spec.Rows = true, uint(sess.winsize.cols), uint(sess.winsize.rows)
	} else {
		spec.Env = withoutTerm(spec.Env)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := t.Runtime.Exec(ctx, t.ID, spec)
	if err != nil {
		return nil, err
	}
	cp := &ctrProgram{p: p}
	cp.pid, _ = p.PID(ctx) // for hangups and signals; without it only the engine's signal is left
	return cp, nil
}

// withoutTerm drops TERM, which only a terminal session has.
func withoutTerm(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TERM=") {
			out = append(out, kv)
		}
	}
	return out
}

// startInContainer is start for a container target.
func (sess *session) startInContainer(command string) (bool, func()) {
	argv := []string{"/bin/sh", "-c", pickShell, "sh", "-l"}
	if command != "" {
		argv = []string{"/bin/sh", "-c", pickShell, "sh", "-c", command}
	}
	return sess.runInContainer(argv, true)
}

// startSFTPInContainer runs the image's sftp-server, over pipes.
func (sess *session) startSFTPInContainer() (bool, func()) {
	return sess.runInContainer([]string{"/bin/sh", "-c", findSFTP}, false)
}

// runInContainer starts argv once per channel and serves it to its end.
// The caller holds sess.mu.
func (sess *session) runInContainer(argv []string, tty bool) (bool, func()) {
	if sess.started || sess.ended {
		return false, nil
	}
	sess.started = true
	cp, err := sess.launchInContainer(argv, tty)
	if err != nil {
		return true, sess.async(func() {
			_, _ = sess.ch.Stderr().Write([]byte("shoal sshd: " + err.Error() + "\n"))
			sess.finish(nil)
			sess.exit(exitCode(127))
		})
	}
	sess.cprog = cp
	terminal := tty && sess.winsize != nil
	return true, sess.async(func() { sess.exit(sess.runContainer(cp, terminal)) })
}

// runContainer copies the program's I/O until its output ends, and tells
// its exit code.
func (sess *session) runContainer(cp *ctrProgram, terminal bool) exitStatus {
	s := sess.s
	sess.wg.Add(1)
	go func() {
		defer sess.wg.Done()
		_, _ = io.Copy(cp.p.Stdin(), activityReader{s, sess.ch})
		if !terminal {
			_ = cp.p.Stdin().Close() // the client's EOF; a terminal has none
		}
	}()
	var copies sync.WaitGroup
	copies.Add(2)
	go func() {
		defer copies.Done()
		_, _ = io.Copy(activityWriter{s, sess.ch}, cp.p.Stdout())
	}()
	go func() {
		defer copies.Done()
		_, _ = io.Copy(activityWriter{s, sess.ch.Stderr()}, cp.p.Stderr())
	}()
	copies.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	code, err := cp.p.Wait(ctx)
	cancel()
	_ = cp.p.Close()
	// What the program left running stays with the container, which the
	// instance's stop ends: no leftovers to note.
	sess.finish(nil)
	if err != nil {
		s.cfg.Logger.Info("ssh session in the container: no exit code", "err", err)
		return exitCode(255)
	}
	return exitCode(uint32(code))
}

// hangupContainer is hangup for a program in the container: as on the
// host when it leads an OS session (a terminal's shell), else SIGHUP to
// it and SIGKILL after the grace period.
func (sess *session) hangupContainer(cp *ctrProgram) {
	select {
	case <-sess.done:
		return
	default:
	}
	if cp.pid > 0 {
		if sid, err := unix.Getsid(cp.pid); err == nil && sid == cp.pid {
			signalSession(cp.pid, syscall.SIGHUP, nil)
			signalSession(cp.pid, syscall.SIGCONT, nil)
			waitHangup(cp.pid)
			signalSession(cp.pid, syscall.SIGKILL, ignoresHangup)
		} else {
			_ = syscall.Kill(cp.pid, syscall.SIGHUP)
			select {
			case <-sess.done:
			case <-time.After(hangupGrace):
				if !ignoresHangup(cp.pid) {
					_ = syscall.Kill(cp.pid, syscall.SIGKILL)
				}
			}
		}
	}
	_ = cp.p.Close()
}

// killContainer ends the program at once: the server closes.
func killContainer(cp *ctrProgram) {
	if cp.pid > 0 {
		if sid, err := unix.Getsid(cp.pid); err == nil && sid == cp.pid {
			signalSession(cp.pid, syscall.SIGKILL, nil)
		} else {
			_ = syscall.Kill(cp.pid, syscall.SIGKILL)
		}
	}
	_ = cp.p.Close()
}

// signalContainer delivers a client's signal to the terminal's
// foreground job (as ^C would), or to the program.
func signalContainer(cp *ctrProgram, sig syscall.Signal) bool {
	if cp.pid > 0 {
		if pg := foregroundOf(cp.pid); pg > 0 {
			return syscall.Kill(-pg, sig) == nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cp.p.Signal(ctx, sig) == nil
}

// foregroundOf is the foreground process group of pid's terminal, 0
// without a terminal. /proc/<pid>/stat's tpgid is given in the pid
// namespace of the /proc that is read (the host's here, where kill
// takes its ids), not the container's: an interactive shell's job runs
// in a group of its own, which is the tpgid while it runs. Before the
// job has started (its typed line echoed, its fork not done) the tpgid
// is the shell's own group, as for ^C typed then.
func foregroundOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3; tpgid is field 8
	if len(f) < 6 {
		return 0
	}
	pg, _ := strconv.Atoi(f[5])
	return pg
}

// dialInContainer dials a -L forward's target from inside the container.
func (s *Server) dialInContainer(network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	return s.cfg.Container.Runtime.Dial(ctx, s.cfg.Container.ID, network, addr)
}
