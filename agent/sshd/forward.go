package sshd

import (
	"io"
	"net"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
)

// dialTimeout bounds connecting to a forwarding target, so that an
// unreachable one is refused in time rather than left pending.
const dialTimeout = 10 * time.Second

// directTCPIP serves a "direct-tcpip" channel (ssh -L, ssh -D, VS Code
// Remote-SSH): a TCP connection from the instance to the host and port
// the client names. Anything the instance can reach is allowed, as with
// OpenSSH's default: the user can reach it from a shell anyway.
func (s *Server) directTCPIP(c *conn, nch ssh.NewChannel) {
	var p struct {
		Host       string
		Port       uint32
		OriginHost string
		OriginPort uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &p); err != nil || p.Port > 65535 {
		_ = nch.Reject(ssh.ConnectionFailed, "malformed direct-tcpip request")
		return
	}
	s.dialAndJoin(c, nch, "tcp", net.JoinHostPort(p.Host, strconv.Itoa(int(p.Port))))
}

// directStreamLocal serves "direct-streamlocal@openssh.com" (ssh -L
// port:/path/to/socket): the same to a Unix socket on the instance.
func (s *Server) directStreamLocal(c *conn, nch ssh.NewChannel) {
	var p struct {
		SocketPath string
		Reserved0  string
		Reserved1  uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &p); err != nil || p.SocketPath == "" {
		_ = nch.Reject(ssh.ConnectionFailed, "malformed direct-streamlocal request")
		return
	}
	if s.cfg.Container != nil {
		// A socket in the container's file system is not this host's.
		_ = nch.Reject(ssh.Prohibited, "forwarding to Unix sockets is not offered: the instance is a container, whose sockets the server does not reach")
		return
	}
	if s.cfg.Credential != nil {
		// The server would connect as itself (root), past the socket's
		// permissions that bind the login's account: refused.
		_ = nch.Reject(ssh.Prohibited, "forwarding to Unix sockets is not offered: logins here run as an account of their own, and the server would connect as itself")
		return
	}
	s.dialAndJoin(c, nch, "unix", p.SocketPath)
}

func (s *Server) dialAndJoin(c *conn, nch ssh.NewChannel, network, addr string) {
	var dst net.Conn
	var err error
	if s.cfg.Container != nil {
		dst, err = s.dialInContainer(network, addr)
	} else {
		dst, err = s.dialLocal(network, addr)
	}
	if err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nch.Accept()
	if err != nil {
		_ = dst.Close()
		return
	}
	s.join(c, ch, reqs, dst)
}

// join copies between a channel and a connection until both directions
// ended, keeping half-closes (a client's EOF is passed on, and the
// answer still comes back), and counts the channel while it is open.
func (s *Server) join(c *conn, ch ssh.Channel, reqs <-chan *ssh.Request, dst net.Conn) {
	s.channelOpened(c, 1)
	defer s.channelOpened(c, -1)
	reqsDone := make(chan struct{})
	go func() {
		defer close(reqsDone)
		for r := range reqs {
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		}
		// The requests end when the channel is closed, by the client or
		// with the connection: a target that stays silent must not keep
		// the copy below (and Server.Close) waiting.
		_ = dst.Close()
	}()
	up := make(chan struct{})
	go func() {
		_, _ = io.Copy(dst, activityReader{s, ch})
		if hc, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		}
		close(up)
	}()
	_, _ = io.Copy(activityWriter{s, ch}, dst)
	_ = ch.CloseWrite()
	<-up
	_ = ch.Close()
	_ = dst.Close()
	<-reqsDone // at the latest when the connection ends
}
