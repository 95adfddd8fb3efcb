package sshd

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// ptyDrain is how long the output still in a terminal may take to come
// out once the shell exited. A background job that keeps the terminal
// open must not keep the session open (it does not with OpenSSH either).
const ptyDrain = 250 * time.Millisecond

// program is a started shell or command, with the server's ends of its
// input and output: a terminal's master side, or three pipes.
type program struct {
	cmd       *exec.Cmd
	startTime uint64 // the process's start time, to tell its OS session from a later one with the same id; 0 when unknown
	master    *os.File
	stdin     *os.File
	stdout    *os.File
	stderr    *os.File
}

func (p *program) pid() int { return p.cmd.Process.Pid }

// foreground is the process group a client's signal goes to: the
// terminal's foreground job when there is a terminal, else the
// program's own group.
func (p *program) foreground() int {
	if p.master != nil {
		if pg, err := foregroundGroup(p.master); err == nil && pg > 0 {
			return pg
		}
	}
	return p.pid()
}

// closeIO closes the server's ends of the program's I/O, which ends the
// copies even when some escaped process still holds the other ends.
func (p *program) closeIO() {
	for _, f := range []*os.File{p.master, p.stdin, p.stdout, p.stderr} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// launch starts the shell (command "") or a command in the home, in a new
// OS session, on a terminal if the client asked for one. The caller holds
// sess.mu.
func (sess *session) launch(command string) (*program, error) {
	cfg := sess.s.cfg
	cmd := &exec.Cmd{Path: cfg.Shell, Dir: cfg.HomeDir}
	if command == "" {
		// A login shell, marked as sshd and login(1) do with a dash in
		// argv[0], so that it reads the profile files of the home.
		cmd.Args = []string{"-" + filepath.Base(cfg.Shell)}
	} else {
		cmd.Args = []string{filepath.Base(cfg.Shell), "-c", command}
	}
	return sess.launchCmd(cmd)
}

// launchCmd starts cmd as the login's account, in a new OS session, on
// a terminal if the client asked for one. The caller holds sess.mu.
func (sess *session) launchCmd(cmd *exec.Cmd) (*program, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: sess.s.cfg.Credential}
	var p *program
	var err error
	if sess.winsize != nil {
		p, err = startTerminal(cmd, *sess.winsize, sess.environ, sess.s.start)
	} else {
		cmd.Env = sess.environ("")
		p, err = startPipes(cmd, sess.s.start)
	}
	if err != nil {
		return nil, err
	}
	p.startTime, _ = startTimeOf(p.pid())
	return p, nil
}

// startPipes starts cmd with pipes for stdin, stdout and stderr (kept
// apart, as `ssh host cmd` keeps them) in a new OS session, with start
// (the instance's network's).
func startPipes(cmd *exec.Cmd, start func(*exec.Cmd) error) (*program, error) {
	var ends [6]*os.File // inR, inW, outR, outW, errR, errW
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range ends[:i] {
				_ = f.Close()
			}
			return nil, err
		}
		ends[i], ends[i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0], ends[3], ends[5]
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: credentialOf(cmd)}
	err := start(cmd)
	for _, f := range []*os.File{ends[0], ends[3], ends[5]} { // the child's ends
		_ = f.Close()
	}
	p := &program{cmd: cmd, stdin: ends[1], stdout: ends[2], stderr: ends[4]}
	if err != nil {
		p.closeIO()
		return nil, err
	}
	return p, nil
}

// run copies the program's I/O to and from the channel until it exits,
// and tells how it ended.
func (sess *session) run(p *program) exitStatus {
	s := sess.s
	in := activityReader{s, sess.ch}
	var err error
	if p.master != nil {
		sess.wg.Add(1)
		go func() {
			defer sess.wg.Done()
			_, _ = io.Copy(p.master, in) // a terminal has no half-close: the client's EOF is just the end of typing
		}()
		drained := make(chan struct{})
		go func() {
			_, _ = io.Copy(activityWriter{s, sess.ch}, p.master) // ends (EIO) once nobody holds the terminal
			close(drained)
		}()
		err = p.cmd.Wait()
		select {
		case <-drained:
		case <-time.After(ptyDrain):
		}
		_ = p.master.Close()
		<-drained
	} else {
		sess.wg.Add(1)
		go func() {
			defer sess.wg.Done()
			_, _ = io.Copy(p.stdin, in)
			_ = p.stdin.Close() // the client's EOF
		}()
		var copies sync.WaitGroup
		copies.Add(2)
		go func() {
			defer copies.Done()
			_, _ = io.Copy(activityWriter{s, sess.ch}, p.stdout)
		}()
		go func() {
			defer copies.Done()
			_, _ = io.Copy(activityWriter{s, sess.ch.Stderr()}, p.stderr)
		}()
		// As OpenSSH, the session lasts until the output ends, even if
		// a background job holds it past the command's exit.
		copies.Wait()
		err = p.cmd.Wait()
		_ = p.stdout.Close()
		_ = p.stderr.Close()
	}
	sess.finish(p)
	return statusOf(err)
}

// exitStatus is how a program ended: a code, or a signal by its SSH name.
type exitStatus struct {
	code   uint32
	signal string
	core   bool
}

func exitCode(code uint32) exitStatus { return exitStatus{code: code} }

func statusOf(err error) exitStatus {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return exitCode(0)
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if name, ok := signalName(ws.Signal()); ok {
				return exitStatus{signal: name, core: ws.CoreDump()}
			}
			return exitCode(128 + uint32(ws.Signal())) // as shells report it
		}
		return exitCode(uint32(ee.ExitCode()))
	}
	return exitCode(255)
}

// signalNames pairs the signals RFC 4254 (section 6.10) names with
// their names there, which have no SIG prefix. A function, not a
// package variable, so that the package holds no state.
func signalNames() map[string]syscall.Signal {
	return map[string]syscall.Signal{
		"ABRT": syscall.SIGABRT, "ALRM": syscall.SIGALRM, "FPE": syscall.SIGFPE, "HUP": syscall.SIGHUP,
		"ILL": syscall.SIGILL, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL, "PIPE": syscall.SIGPIPE,
		"QUIT": syscall.SIGQUIT, "SEGV": syscall.SIGSEGV, "TERM": syscall.SIGTERM, "USR1": syscall.SIGUSR1,
		"USR2": syscall.SIGUSR2,
	}
}

func signalName(sig syscall.Signal) (string, bool) {
	for name, s := range signalNames() {
		if s == sig {
			return name, true
		}
	}
	return "", false
}

// credentialOf is the account cmd was set to run as (launchCmd sets it in
// a SysProcAttr that the start functions replace with their own).
func credentialOf(cmd *exec.Cmd) *syscall.Credential {
	if cmd.SysProcAttr == nil {
		return nil
	}
	return cmd.SysProcAttr.Credential
}
