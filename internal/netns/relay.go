package netns

import (
	"io"
	"net"
	"net/url"
	"sync"
	"time"
)

// LoopbackAddr is the server's host:port when the agent reaches
// it at serverURL on the loopback, else "" (a server elsewhere is
// reached, or not, by the namespace's own way out). Work in a namespace
// of its own finds it there when the agent listens on the same address
// inside and relays (Relay).
func LoopbackAddr(serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" {
		return ""
	}
	host, port := u.Hostname(), u.Port()
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		if host != "localhost" {
			return ""
		}
		host = "127.0.0.1"
	}
	if port == "" {
		port = map[string]string{"https": "443"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	return net.JoinHostPort(host, port)
}

// Relay relays each connection accepted on ln to addr on this host,
// until ln is closed. TLS passes through untouched: the job talks to
// the server as it would on the host.
func Relay(ln net.Listener, addr string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			s, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				return
			}
			defer s.Close()
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(s, c)
				if tc, ok := s.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}()
			_, _ = io.Copy(c, s)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			wg.Wait()
		}()
	}
}
