// Package sshd is the SSH server of a compute instance's agent: users reach
// their instance with the real OpenSSH client — shells with a terminal,
// `ssh host command`, port forwarding (`ssh -L`, which VS Code Remote-SSH
// needs), and scp/sftp. Only public keys are accepted, only for the
// instance's login (azureuser). Sessions run as the agent's OS user, in
// the instance's home: on Shoal the agent is the instance's machine.
package sshd

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Config configures a Server.
type Config struct {
	// Listen is the address to listen on; default 127.0.0.1:0.
	Listen string
	// HostKeyPath holds the host key (created when missing).
	HostKeyPath string
	// Username is the only login accepted; default azureuser.
	Username string
	// AuthorizedKeys returns the keys allowed in now; called at each
	// login, so a key set after start takes effect on the next one.
	AuthorizedKeys func() []ssh.PublicKey
	// HomeDir is where sessions start and sftp paths are relative to.
	HomeDir string
	// Shell runs commands and interactive sessions; default /bin/bash
	// (/bin/sh when there is no bash).
	Shell string
	// Env returns extra environment for each session (the MSI endpoint).
	Env func() []string
	// Logger receives the server's log.
	Logger *slog.Logger
	// Now tells the time for LastActivity; default time.Now.
	Now func() time.Time
}

// Server is a running SSH server.
type Server struct {
	cfg  Config
	ln   net.Listener
	conf *ssh.ServerConfig
	fp   string

	mu       sync.Mutex
	conns    map[*ssh.ServerConn]int // open channels per connection
	procs    map[*session]bool
	last     time.Time
	closed   bool
	wg       sync.WaitGroup
	closeErr error
}

// Start listens and serves in the background.
func Start(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Username == "" {
		cfg.Username = "azureuser"
	}
	if cfg.Shell == "" {
		cfg.Shell = defaultShell()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AuthorizedKeys == nil {
		cfg.AuthorizedKeys = func() []ssh.PublicKey { return nil }
	}
	if cfg.HostKeyPath == "" {
		return nil, errors.New("sshd: a host key path is required")
	}
	signer, err := loadHostKey(cfg.HostKeyPath)
	if err != nil {
		return nil, fmt.Errorf("sshd: host key: %w", err)
	}
	s := &Server{cfg: cfg, conns: map[*ssh.ServerConn]int{}, procs: map[*session]bool{}, fp: ssh.FingerprintSHA256(signer.PublicKey())}
	s.conf = &ssh.ServerConfig{
		PublicKeyCallback: s.checkKey,
		ServerVersion:     "SSH-2.0-Shoal",
		MaxAuthTries:      6,
	}
	s.conf.AddHostKey(signer)
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

// checkKey accepts the configured login with one of the authorized keys.
func (s *Server) checkKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if meta.User() != s.cfg.Username {
		return nil, fmt.Errorf("user %q may not log in; the login is %s", meta.User(), s.cfg.Username)
	}
	want := key.Marshal()
	for _, k := range s.cfg.AuthorizedKeys() {
		if bytes.Equal(k.Marshal(), want) {
			return &ssh.Permissions{Extensions: map[string]string{"fp": ssh.FingerprintSHA256(key)}}, nil
		}
	}
	return nil, errors.New("public key not authorized")
}

// Addr is where the server listens.
func (s *Server) Addr() *net.TCPAddr { return s.ln.Addr().(*net.TCPAddr) }

// HostKeyFingerprint is the host key's SHA256 fingerprint, as ssh-keygen
// -l prints it.
func (s *Server) HostKeyFingerprint() string { return s.fp }

// ActiveSessions counts open connections that have at least one channel
// (a shell, a command, a forwarded port, an sftp session).
func (s *Server) ActiveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ch := range s.conns {
		if ch > 0 {
			n++
		}
	}
	return n
}

// LastActivity is when a connection last opened or closed, or data last
// moved on one of its channels.
func (s *Server) LastActivity() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *Server) touch() {
	now := s.cfg.Now()
	s.mu.Lock()
	if now.After(s.last) {
		s.last = now
	}
	s.mu.Unlock()
}

// Close stops listening, closes every connection and kills every
// session's processes.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*ssh.ServerConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	procs := make([]*session, 0, len(s.procs))
	for p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	err := s.ln.Close()
	for _, p := range procs {
		p.kill()
	}
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

// serveConn runs one SSH connection.
func (s *Server) serveConn(nc net.Conn) {
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second)) // the handshake
	conn, chans, reqs, err := ssh.NewServerConn(nc, s.conf)
	if err != nil {
		s.cfg.Logger.Info("ssh login refused", "remote", nc.RemoteAddr().String(), "err", err)
		nc.Close()
		return
	}
	_ = nc.SetDeadline(time.Time{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conns[conn] = 0
	s.mu.Unlock()
	s.touch()
	s.cfg.Logger.Info("ssh login", "user", conn.User(), "remote", conn.RemoteAddr().String(), "key", conn.Permissions.Extensions["fp"])
	go s.globalRequests(reqs)
	var wg sync.WaitGroup
	for nch := range chans {
		switch nch.ChannelType() {
		case "session":
			ch, creqs, err := nch.Accept()
			if err != nil {
				continue
			}
			s.channelOpened(conn, 1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer s.channelOpened(conn, -1)
				s.serveSession(ch, creqs)
			}()
		case "direct-tcpip":
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.forward(conn, nch)
			}()
		default:
			_ = nch.Reject(ssh.UnknownChannelType, "unsupported channel type "+nch.ChannelType())
		}
	}
	wg.Wait()
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
	s.touch()
}

func (s *Server) channelOpened(conn *ssh.ServerConn, delta int) {
	s.mu.Lock()
	if _, ok := s.conns[conn]; ok {
		s.conns[conn] += delta
	}
	s.mu.Unlock()
	s.touch()
}

// globalRequests answers keepalives; remote forwarding is refused.
func (s *Server) globalRequests(reqs <-chan *ssh.Request) {
	for r := range reqs {
		switch r.Type {
		case "keepalive@openssh.com":
			_ = r.Reply(true, nil)
		default:
			_ = r.Reply(false, nil)
		}
	}
}
