package sshd

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// session is one "session" channel: a shell, a command or sftp.
type session struct {
	s  *Server
	c  *conn
	ch ssh.Channel
	wg sync.WaitGroup // the goroutines serving the program and its I/O

	mu      sync.Mutex
	env     []string    // variables the client sent and we accept
	term    string      // from pty-req
	winsize *winsize    // from pty-req and window-change; nil: no terminal
	prog    *program    // the running shell or command; nil before, or for sftp
	cprog   *ctrProgram // the same in a Config.Container
	started bool        // shell, exec or subsystem accepted: the channel runs one thing
	ended   bool        // hung up or killed: start nothing any more
	done    chan struct{}
}

// serveSession answers a session channel's requests until it closes.
func (s *Server) serveSession(c *conn, nch ssh.NewChannel) {
	ch, reqs, err := nch.Accept()
	if err != nil {
		return
	}
	sess := &session{s: s, c: c, ch: ch, done: make(chan struct{})}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.sessions[sess] = struct{}{}
	}
	s.mu.Unlock()
	if closed {
		_ = ch.Close()
		ssh.DiscardRequests(reqs)
		return
	}
	s.channelOpened(c, 1)
	for req := range reqs {
		ok, then := sess.handle(req)
		if req.WantReply {
			_ = req.Reply(ok, nil)
		}
		// The program's output starts flowing only after the reply, so
		// that its exit status can never overtake the reply.
		if then != nil {
			then()
		}
	}
	// The channel is closed: by us once the program ended, or by the
	// client (or with the connection) while it runs. The connection need
	// not wait for the program's end (a nohup'd command may outlive the
	// hangup): the server does, and Close kills it.
	s.channelOpened(c, -1)
	s.wg.Add(1) // s.wg counts this goroutine's connection: not zero
	go func() {
		defer s.wg.Done()
		sess.hangup()
		sess.wg.Wait()
		s.mu.Lock()
		delete(s.sessions, sess)
		s.mu.Unlock()
	}()
}

// handle answers one channel request; then, when not nil, is to run
// after the reply.
func (sess *session) handle(req *ssh.Request) (ok bool, then func()) {
	switch req.Type {
	case "env":
		var kv struct{ Name, Value string }
		if ssh.Unmarshal(req.Payload, &kv) != nil || !acceptedEnv(kv.Name) {
			return false, nil
		}
		sess.mu.Lock()
		sess.env = append(sess.env, kv.Name+"="+kv.Value)
		sess.mu.Unlock()
		return true, nil
	case "pty-req":
		var p struct {
			Term                 string
			Cols, Rows, Wpx, Hpx uint32
			Modes                string
		}
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return false, nil
		}
		sess.mu.Lock()
		defer sess.mu.Unlock()
		if sess.started {
			return false, nil
		}
		sess.term, sess.winsize = p.Term, &winsize{cols: p.Cols, rows: p.Rows}
		return true, nil
	case "window-change":
		var w struct{ Cols, Rows, Wpx, Hpx uint32 }
		if ssh.Unmarshal(req.Payload, &w) != nil {
			return false, nil
		}
		sess.resize(w.Cols, w.Rows)
		return true, nil
	case "shell":
		return sess.start("")
	case "exec":
		var p struct{ Command string }
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return false, nil
		}
		return sess.start(p.Command)
	case "subsystem":
		var p struct{ Name string }
		if ssh.Unmarshal(req.Payload, &p) != nil || p.Name != "sftp" {
			return false, nil
		}
		return sess.startSFTP()
	case "signal":
		var p struct{ Signal string }
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return false, nil
		}
		return sess.signal(p.Signal), nil
	}
	// x11-req, auth-agent-req@openssh.com and the like are not offered.
	return false, nil
}

// acceptedEnv says which variables a client may set: the locale, as
// OpenSSH's stock AcceptEnv, and a few equally harmless ones. Anything
// else (PATH, LD_PRELOAD...) stays the server's business.
func acceptedEnv(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "COLORTERM":
		return true
	}
	return strings.HasPrefix(name, "LC_") && !strings.ContainsAny(name, "=\x00")
}

// environ is the environment of the session's program: the agent's
// PATH and LANG, the configured extra variables, the client's accepted
// ones, then the login's own (which nothing overrides). The caller holds
// sess.mu.
func (sess *session) environ(tty string) []string {
	cfg := sess.s.cfg
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + path}
	if v, ok := os.LookupEnv("LANG"); ok {
		env = append(env, "LANG="+v)
	}
	env = append(env, cfg.Env()...)
	env = append(env, sess.env...)
	term := sess.term
	client, _, _ := net.SplitHostPort(sess.c.RemoteAddr().String())
	clientPort := portOf(sess.c.RemoteAddr())
	server, serverPort := hostOf(sess.c.LocalAddr()), portOf(sess.c.LocalAddr())
	env = append(env,
		"HOME="+cfg.HomeDir, "USER="+cfg.Username, "LOGNAME="+cfg.Username, "SHELL="+cfg.Shell,
		"SSH_CLIENT="+client+" "+clientPort+" "+serverPort,
		"SSH_CONNECTION="+client+" "+clientPort+" "+server+" "+serverPort,
	)
	if tty != "" {
		if term == "" {
			term = "dumb"
		}
		env = append(env, "TERM="+term, "SSH_TTY="+tty)
	}
	return env
}

func hostOf(a net.Addr) string {
	h, _, _ := net.SplitHostPort(a.String())
	return h
}

func portOf(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// start runs the shell (command "") or a command, once per channel. The
// process starts here, under the lock, so that a hangup or kill either
// sees it or prevents it.
func (sess *session) start(command string) (bool, func()) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.s.cfg.Container != nil {
		return sess.startInContainer(command)
	}
	if sess.started || sess.ended {
		return false, nil
	}
	sess.started = true
	prog, err := sess.launch(command)
	if err != nil {
		// As sshd does when the shell cannot run: say why, exit 127.
		return true, sess.async(func() {
			_, _ = sess.ch.Stderr().Write([]byte("shoal sshd: " + err.Error() + "\n"))
			sess.finish(nil)
			sess.exit(exitCode(127))
		})
	}
	sess.prog = prog
	return true, sess.async(func() { sess.exit(sess.run(prog)) })
}

// async returns a func that runs fn on a goroutine the session waits for.
func (sess *session) async(fn func()) func() {
	return func() {
		sess.wg.Add(1)
		go func() {
			defer sess.wg.Done()
			fn()
		}()
	}
}

// finish marks the program as over, by itself. What it left running on
// purpose is noted, for Close to end with the instance.
func (sess *session) finish(prog *program) {
	if prog != nil {
		if members := sessionMembers(prog.pid()); len(members) > 0 && prog.startTime != 0 {
			sess.s.mu.Lock()
			if sess.s.leftover != nil {
				sess.s.leftover[prog.pid()] = prog.startTime
			}
			sess.s.mu.Unlock()
		}
	}
	close(sess.done)
}

// exit sends the program's end to the client and closes the channel,
// which ends the request loop.
func (sess *session) exit(st exitStatus) {
	_ = sess.ch.CloseWrite()
	if st.signal != "" {
		_, _ = sess.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Msg, Lang  string
		}{Signal: st.signal, CoreDumped: st.core}))
	} else {
		_, _ = sess.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{st.code}))
	}
	_ = sess.ch.Close()
}

// hangup ends a session whose channel closed while its program still
// runs, as a terminal hangup would: SIGHUP (with SIGCONT, so stopped jobs
// see it) to every process of the session, then SIGKILL for those that
// neither exited nor ignore SIGHUP. Processes started with nohup survive,
// as they would on a machine.
func (sess *session) hangup() {
	sess.mu.Lock()
	sess.ended = true
	prog, cprog := sess.prog, sess.cprog
	sess.mu.Unlock()
	if cprog != nil {
		sess.hangupContainer(cprog)
		return
	}
	if prog == nil {
		return // never started, or sftp: nothing runs apart from the channel
	}
	select {
	case <-sess.done:
		return // the program ended by itself; its leftovers are on purpose
	default:
	}
	pid := prog.pid()
	signalSession(pid, syscall.SIGHUP, nil)
	signalSession(pid, syscall.SIGCONT, nil)
	waitHangup(pid)
	signalSession(pid, syscall.SIGKILL, ignoresHangup)
	prog.closeIO() // whoever still holds the program's output, we are done reading it
}

// kill ends the session's processes at once: the server closes.
func (sess *session) kill() {
	sess.mu.Lock()
	sess.ended = true
	prog, cprog := sess.prog, sess.cprog
	sess.mu.Unlock()
	if cprog != nil {
		killContainer(cprog)
	}
	if prog != nil {
		signalSession(prog.pid(), syscall.SIGKILL, nil)
		prog.closeIO()
	}
}

// resize applies a window change, to the terminal if there is one yet.
func (sess *session) resize(cols, rows uint32) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.winsize != nil {
		sess.winsize.cols, sess.winsize.rows = cols, rows
	}
	if sess.prog != nil && sess.prog.master != nil {
		_ = setWinsize(sess.prog.master, winsize{cols: cols, rows: rows})
	}
	if sess.cprog != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sess.cprog.p.Resize(ctx, uint(cols), uint(rows)); err != nil {
			sess.s.cfg.Logger.Info("ssh window change in the container failed", "err", err)
		}
	}
}

// signal delivers a client's signal ("INT", "TERM"...) to the program's
// foreground process group, as a terminal's ^C would.
func (sess *session) signal(name string) bool {
	sig, ok := signalNames()[name]
	sess.mu.Lock()
	prog, cprog := sess.prog, sess.cprog
	sess.mu.Unlock()
	if !ok || (prog == nil && cprog == nil) {
		return false
	}
	select {
	case <-sess.done:
		return false
	default:
	}
	if cprog != nil {
		return signalContainer(cprog, sig)
	}
	return syscall.Kill(-prog.foreground(), sig) == nil
}
