package testproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// echo starts a server that echoes each line back.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line and reads the answer within d: ok false when
// none came, closed true when the connection ended.
func roundTrip(c net.Conn, d time.Duration) (ok, closed bool) {
	c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return false, true
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		if ne, isNet := err.(net.Error); isNet && ne.Timeout() {
			return false, false
		}
		return false, true
	}
	return line == "ping\n", false
}

// Frozen, the proxy carries nothing and closes nothing; reset, the
// connections close; cut, no new one is carried.
func TestFreezeResetCut(t *testing.T) {
	p := New(t, echo(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _ := roundTrip(c, 5*time.Second); !ok {
		t.Fatal("no echo through the proxy")
	}
	p.Freeze()
	if ok, closed := roundTrip(c, 300*time.Millisecond); ok || closed {
		t.Fatalf("frozen: echoed %v, closed %v; want silence", ok, closed)
	}
	p.Reset()
	if _, closed := roundTrip(c, 5*time.Second); !closed {
		t.Error("reset: the connection stayed open")
	}
	p.Cut()
	if c2, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c2.Close()
		t.Error("cut: a new connection was accepted")
	}
}
