package sshd

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// handshakeTimeout bounds the key exchange and authentication of a new
// connection, so that half-open or silent clients cannot pile up.
const handshakeTimeout = 30 * time.Second

// Config configures a Server. Only HostKeyPath is required.
type Config struct {
	// Listen is the TCP address to listen on; default 127.0.0.1:0.
	Listen string
	// HostKeyPath is the host key file (OpenSSH private key format). An
	// ed25519 key is created there (mode 0600) when it is missing, so
	// that the host key stays the same across stop and start.
	HostKeyPath string
	// Username is the only login accepted; default azureuser.
	Username string
	// AuthorizedKeys returns the keys allowed in now. It is called at
	// each login, so keys set or changed after Start take effect on the
	// next login. Nil allows nobody.
	AuthorizedKeys func() []ssh.PublicKey
	// HomeDir is where sessions start, HOME in their environment, and
	// what relative sftp and scp paths are relative to; default the
	// agent's own home.
	HomeDir string
	// Shell runs commands and interactive sessions; default /bin/bash,
	// else /bin/sh.
	Shell string
	// Env returns extra environment for sessions (the managed identity
	// endpoint, the instance's name). It is called for each session.
	Env func() []string
	// Logger receives logins, refusals and errors; default discards.
	Logger *slog.Logger
	// Now tells the time for LastActivity; default time.Now.
	Now func() time.Time
	// CheckPassword, when set, also offers password authentication for
	// the login (a cluster's admin_password); it reports whether the
	// password is right. Nil offers public keys only.
	CheckPassword func(password []byte) bool
	// OnLogin, when set, is told of every login and every refused
	// connection, so that interactive sessions reach the audit log.
	OnLogin func(Login)
	// Credential, when set, is the OS account sessions, commands and file
	// transfers run as (the login's run-as account); nil runs them as the
	// server's own user.
	Credential *syscall.Credential
	// SFTPCommand serves SFTP on its standard input and output (`shoal
	// agent sftp-server`). With a Credential, SFTP runs as this command
	// under that account, never inside the server; when it is empty the
	// session tells the client SFTPUnavailable and ends with status 1.
	SFTPCommand []string
	// SFTPUnavailable says why SFTPCommand is empty (no sftp-server on
	// the host, and no copy of the agent the account may run), for the
	// client to read on its stderr rather than a bare "subsystem request
	// failed".
	SFTPUnavailable string
	// Container, when set, runs every session in that running container
	// instead of on this host: shells, commands, SFTP and scp as the
	// target's user in its home, -L forwards from its network. HomeDir,
	// Shell, Credential and SFTPCommand are then unused.
	Container *ContainerTarget
	// Network, when set, is the instance's network namespace, which
	// sessions and forwards use instead of the host's network (see
	// Network). Unused with Container, whose own network they use.
	Network Network
}

// Login is a login to the server, or a refused attempt.
type Login struct {
	At             time.Time
	User           string
	Remote         string
	KeyFingerprint string
	Accepted       bool
	// Err says why a connection was refused.
	Err string
}

// Server is a running SSH server.
type Server struct {
	cfg  Config
	ln   net.Listener
	conf *ssh.ServerConfig
	fp   string
	// hostKey is the host public key, authorized_keys form.
	hostKey string

	mu       sync.Mutex
	conns    map[*conn]struct{}
	sessions map[*session]struct{}
	leftover map[int]uint64 // finished sessions that left processes: session id → its leader's start time
	last     time.Time
	closed   bool
	wg       sync.WaitGroup
}

// conn is one authenticated SSH connection.
type conn struct {
	*ssh.ServerConn
	// The fields below are guarded by Server.mu.
	channels int                     // open channels of any type
	remote   map[string]net.Listener // tcpip-forward listeners by forwardKey
	gone     bool                    // the connection ended: open no more listeners
}

// Start listens and serves in the background until Close.
func Start(cfg Config) (*Server, error) {
	resetHangup()
	if err := defaults(&cfg); err != nil {
		return nil, err
	}
	signer, err := loadHostKey(cfg.HostKeyPath)
	if err != nil {
		return nil, fmt.Errorf("sshd: host key %s: %w", cfg.HostKeyPath, err)
	}
	s := &Server{
		cfg:      cfg,
		fp:       ssh.FingerprintSHA256(signer.PublicKey()),
		hostKey:  strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))),
		conns:    map[*conn]struct{}{},
		sessions: map[*session]struct{}{},
		leftover: map[int]uint64{},
	}
	s.conf = s.serverConfig(signer)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("sshd: %w", err)
	}
	s.ln = ln
	s.last = cfg.Now()
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func defaults(cfg *Config) error {
	if cfg.HostKeyPath == "" {
		return errors.New("sshd: a host key path is required")
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Username == "" {
		cfg.Username = "azureuser"
	}
	if cfg.Container != nil {
		if err := containerDefaults(cfg); err != nil {
			return err
		}
	} else if cfg.HomeDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("sshd: no home directory given and none known: %w", err)
		}
		cfg.HomeDir = home
	}
	if st, err := os.Stat(cfg.HomeDir); cfg.Container == nil && (err != nil || !st.IsDir()) {
		return fmt.Errorf("sshd: the home %s is not a directory", cfg.HomeDir)
	}
	if cfg.Shell == "" {
		cfg.Shell = "/bin/sh"
		if _, err := os.Stat("/bin/bash"); err == nil {
			cfg.Shell = "/bin/bash"
		}
	}
	if cfg.AuthorizedKeys == nil {
		cfg.AuthorizedKeys = func() []ssh.PublicKey { return nil }
	}
	if cfg.Env == nil {
		cfg.Env = func() []string { return nil }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() *net.TCPAddr { return s.ln.Addr().(*net.TCPAddr) }

// HostKey is the host public key in authorized_keys form
// ("ssh-ed25519 AAAA..."), for clients to pin.
func (s *Server) HostKey() string { return s.hostKey }

// HostKeyFingerprint is the host key's fingerprint as `ssh-keygen -l`
// prints it ("SHA256:..."), for users to check on first connection.
func (s *Server) HostKeyFingerprint() string { return s.fp }

// ActiveSessions counts the open connections with at least one open
// channel (a shell, a command, sftp, a forwarded connection): an idle
// instance is one nobody uses, and an open SSH session is use.
func (s *Server) ActiveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.channels > 0 {
			n++
		}
	}
	return n
}

// LastActivity is when a connection last opened or closed, or data last
// moved on one of its channels (Start's time before any).
func (s *Server) LastActivity() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// touch records activity now.
func (s *Server) touch() {
	now := s.cfg.Now()
	s.mu.Lock()
	if now.After(s.last) {
		s.last = now
	}
	s.mu.Unlock()
}

// Close stops listening, kills the processes of every session this
// server started (the instance is going off), closes every connection
// and waits for their goroutines. It may be called more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	var conns []*conn
	for c := range s.conns {
		conns = append(conns, c)
	}
	var sessions []*session
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	leftover := s.leftover
	s.leftover = nil
	s.mu.Unlock()
	err := s.ln.Close()
	for _, sess := range sessions {
		sess.kill()
	}
	killLeftovers(leftover)
	for _, c := range conns {
		_ = c.Close()
	}
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors and the like: wait a little rather
			// than stop serving the instance for good, or spin.
			s.cfg.Logger.Warn("ssh accept failed", "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

// serveConn runs one SSH connection to its end.
func (s *Server) serveConn(nc net.Conn) {
	defer nc.Close()
	// A network deadline is wall-clock time by nature, not Config.Now's.
	_ = nc.SetDeadline(time.Now().Add(handshakeTimeout))
	sc, chans, reqs, err := ssh.NewServerConn(nc, s.conf)
	if err != nil {
		s.cfg.Logger.Info("ssh connection refused", "remote", nc.RemoteAddr().String(), "err", err)
		if s.cfg.OnLogin != nil {
			s.cfg.OnLogin(Login{At: s.cfg.Now(), Remote: nc.RemoteAddr().String(), Err: err.Error()})
		}
		return
	}
	_ = nc.SetDeadline(time.Time{})
	c := &conn{ServerConn: sc, remote: map[string]net.Listener{}}
	if !s.addConn(c) {
		_ = sc.Close()
		go ssh.DiscardRequests(reqs)
		for nch := range chans {
			_ = nch.Reject(ssh.ResourceShortage, "the server is shutting down")
		}
		return
	}
	s.cfg.Logger.Info("ssh login", "user", sc.User(), "remote", sc.RemoteAddr().String(), "key", sc.Permissions.Extensions[extFingerprint])
	if s.cfg.OnLogin != nil {
		s.cfg.OnLogin(Login{At: s.cfg.Now(), User: sc.User(), Remote: sc.RemoteAddr().String(), KeyFingerprint: sc.Permissions.Extensions[extFingerprint], Accepted: true})
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.globalRequests(c, reqs, &wg)
	}()
	for nch := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.openChannel(c, nch)
		}()
	}
	// The connection is gone: its remote forwards go with it, and its
	// channels' goroutines end as their channels are now closed.
	s.closeRemoteForwards(c)
	wg.Wait()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.touch()
	s.cfg.Logger.Info("ssh logout", "user", sc.User(), "remote", sc.RemoteAddr().String())
}

func (s *Server) addConn(c *conn) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.touch()
	return true
}

// openChannel serves a channel the client opens.
func (s *Server) openChannel(c *conn, nch ssh.NewChannel) {
	switch nch.ChannelType() {
	case "session":
		s.serveSession(c, nch)
	case "direct-tcpip":
		s.directTCPIP(c, nch)
	case "direct-streamlocal@openssh.com":
		s.directStreamLocal(c, nch)
	default:
		_ = nch.Reject(ssh.UnknownChannelType, "unsupported channel type "+nch.ChannelType())
	}
}

// channelOpened counts a channel opening (+1) or closing (-1).
func (s *Server) channelOpened(c *conn, delta int) {
	s.mu.Lock()
	c.channels += delta
	s.mu.Unlock()
	s.touch()
}

// globalRequests answers the connection-wide requests: keepalives (so
// that ServerAliveInterval works) and remote forwarding.
func (s *Server) globalRequests(c *conn, reqs <-chan *ssh.Request, wg *sync.WaitGroup) {
	for r := range reqs {
		ok, payload := false, []byte(nil)
		switch r.Type {
		case "keepalive@openssh.com":
			ok = true
		case "tcpip-forward":
			ok, payload = s.remoteForward(c, r.Payload, wg)
		case "cancel-tcpip-forward":
			ok = s.cancelRemoteForward(c, r.Payload)
		}
		if r.WantReply {
			_ = r.Reply(ok, payload)
		}
	}
}
