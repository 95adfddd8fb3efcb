package sshd

import (
	"context"
	"net"
	"strconv"
	"sync"

	"golang.org/x/crypto/ssh"
)

// forwardKey names a remote forward as the client does in
// cancel-tcpip-forward: the address it asked for and the port bound.
func forwardKey(addr string, port uint32) string {
	return net.JoinHostPort(addr, strconv.Itoa(int(port)))
}

// remoteForward answers "tcpip-forward" (ssh -R): it listens on the
// instance and opens a "forwarded-tcpip" channel to the client for each
// connection. As OpenSSH's default GatewayPorts=no, it listens on the
// loopback whatever address is asked for, so that only the instance
// itself reaches the port: in a container, the loopback of the
// container's network. The listener lives as long as the connection.
func (s *Server) remoteForward(c *conn, payload []byte, wg *sync.WaitGroup) (bool, []byte) {
	var p struct {
		Addr string
		Port uint32
	}
	if ssh.Unmarshal(payload, &p) != nil || p.Port > 65535 {
		return false, nil
	}
	if (s.cfg.Credential != nil || s.cfg.Container != nil) && p.Port != 0 && p.Port < 1024 {
		// The server binds as itself (root): a login that runs as an
		// account of its own may not take a port that account could not.
		s.cfg.Logger.Info("ssh remote forward refused: a privileged port", "port", p.Port)
		return false, nil
	}
	host := "127.0.0.1"
	if ip := net.ParseIP(p.Addr); ip != nil && ip.Equal(net.IPv6loopback) {
		host = "::1"
	}
	var ln net.Listener
	var err error
	if t := s.cfg.Container; t != nil {
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		ln, err = t.Runtime.Listen(ctx, t.ID, "tcp", net.JoinHostPort(host, strconv.Itoa(int(p.Port))))
		cancel()
	} else {
		ln, err = s.listenLocal(net.JoinHostPort(host, strconv.Itoa(int(p.Port))))
	}
	if err != nil {
		s.cfg.Logger.Info("ssh remote forward refused", "addr", p.Addr, "port", p.Port, "err", err)
		return false, nil
	}
	port := uint32(ln.Addr().(*net.TCPAddr).Port)
	key := forwardKey(p.Addr, port)
	s.mu.Lock()
	_, dup := c.remote[key]
	ok := !c.gone && !s.closed && !dup
	if ok {
		c.remote[key] = ln
	}
	s.mu.Unlock()
	if !ok {
		_ = ln.Close()
		return false, nil
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.acceptForwarded(c, ln, p.Addr, port, wg)
	}()
	if p.Port == 0 {
		// The client asked for any port: it learns which from the reply.
		return true, ssh.Marshal(struct{ Port uint32 }{port})
	}
	return true, nil
}

// acceptForwarded hands each connection to a remote forward's port to
// the client, until the listener is closed.
func (s *Server) acceptForwarded(c *conn, ln net.Listener, addr string, port uint32, wg *sync.WaitGroup) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			origin, originPort, _ := net.SplitHostPort(nc.RemoteAddr().String())
			op, _ := strconv.Atoi(originPort)
			ch, reqs, err := c.OpenChannel("forwarded-tcpip", ssh.Marshal(struct {
				Addr       string
				Port       uint32
				OriginAddr string
				OriginPort uint32
			}{addr, port, origin, uint32(op)}))
			if err != nil {
				_ = nc.Close()
				return
			}
			s.join(c, ch, reqs, nc)
		}()
	}
}

// cancelRemoteForward answers "cancel-tcpip-forward".
func (s *Server) cancelRemoteForward(c *conn, payload []byte) bool {
	var p struct {
		Addr string
		Port uint32
	}
	if ssh.Unmarshal(payload, &p) != nil {
		return false
	}
	key := forwardKey(p.Addr, p.Port)
	s.mu.Lock()
	ln, ok := c.remote[key]
	delete(c.remote, key)
	s.mu.Unlock()
	if ok {
		_ = ln.Close()
	}
	return ok
}

// closeRemoteForwards closes a finished connection's listeners.
func (s *Server) closeRemoteForwards(c *conn) {
	s.mu.Lock()
	c.gone = true
	lns := c.remote
	c.remote = map[string]net.Listener{}
	s.mu.Unlock()
	for _, ln := range lns {
		_ = ln.Close()
	}
}
