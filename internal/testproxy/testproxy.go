// Package testproxy is a TCP proxy for tests that stage network faults
// between a client and a server (a Shoal server and its database, say):
// a cut, where both ends see the connections close, and a freeze, where
// packets are dropped and neither end sees the other go, as in a
// partition.
package testproxy

import (
	"net"
	"sync"
	"testing"
)

// Proxy forwards the connections made to Addr to a backend.
type Proxy struct {
	ln     net.Listener
	frozen chan struct{}
	freeze sync.Once

	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

// New starts a proxy to backend ("host:port"), closed at the test's end.
func New(t testing.TB, backend string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, frozen: make(chan struct{})}
	go p.accept(backend)
	t.Cleanup(p.Cut)
	return p
}

// Addr is where clients connect ("127.0.0.1:port").
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept(backend string) {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", backend)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst until src ends, then closes dst; once frozen it
// drops what it reads and closes nothing.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-p.frozen:
			if err != nil {
				return
			}
			continue
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// Freeze stops carrying anything, in both directions, and closes
// nothing: a partition that drops packets, which neither end notices
// until its own timeouts say so.
func (p *Proxy) Freeze() { p.freeze.Do(func() { close(p.frozen) }) }

// Reset closes every connection it carries, so that both ends learn of
// the fault, and goes on accepting new ones.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Cut closes the listener and every connection: the backend is
// unreachable through the proxy from then on.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
