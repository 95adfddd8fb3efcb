package sshd

import (
	"context"
	"net"
	"os/exec"
)

// Network is a network namespace of the instance's own (internal/netns's
// NS is one) that its sessions run in instead of the host's network:
// shells, commands and SFTP start in it, -L forwards dial from it and -R
// forwards listen on its loopback, so that a login reaches what the
// instance's own processes listen on (its notebook on localhost) and
// neither the host's loopback nor another user's listeners there.
type Network interface {
	// Start starts cmd inside the namespace.
	Start(cmd *exec.Cmd) error
	// Listen listens on addr inside the namespace.
	Listen(network, addr string) (net.Listener, error)
	// Dial connects to addr from inside the namespace.
	Dial(ctx context.Context, network, addr string) (net.Conn, error)
}

// start starts a session's program: in the instance's namespace when it
// has one, else on the host's network.
func (s *Server) start(cmd *exec.Cmd) error {
	if s.cfg.Network != nil {
		return s.cfg.Network.Start(cmd)
	}
	return cmd.Start()
}

// listenLocal listens on the instance's loopback (a -R forward).
func (s *Server) listenLocal(addr string) (net.Listener, error) {
	if s.cfg.Network != nil {
		return s.cfg.Network.Listen("tcp", addr)
	}
	return net.Listen("tcp", addr)
}

// dialLocal connects from the instance (a -L forward).
func (s *Server) dialLocal(network, addr string) (net.Conn, error) {
	if s.cfg.Network != nil && network == "tcp" {
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		defer cancel()
		return s.cfg.Network.Dial(ctx, network, addr)
	}
	return net.DialTimeout(network, addr, dialTimeout)
}
