package sshd

import (
	"io"
	"net"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
)

// forward serves a "direct-tcpip" channel (ssh -L): it connects to the
// requested host and port from the instance and copies both ways.
func (s *Server) forward(conn *ssh.ServerConn, nch ssh.NewChannel) {
	var p struct {
		Host       string
		Port       uint32
		OriginHost string
		OriginPort uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &p); err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, "malformed forwarding request")
		return
	}
	target := net.JoinHostPort(p.Host, strconv.Itoa(int(p.Port)))
	dst, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nch.Accept()
	if err != nil {
		dst.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	s.channelOpened(conn, 1)
	defer s.channelOpened(conn, -1)
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(dst, activity{s, ch})
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(activityWriter{s, ch}, dst)
		_ = ch.CloseWrite()
		done <- struct{}{}
	}()
	<-done
	<-done
	ch.Close()
	dst.Close()
}
