package sshd_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freePort finds a local port for the client to listen on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func webServer(t *testing.T) *httptest.Server {
	t.Helper()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "through the tunnel")
	}))
	t.Cleanup(web.Close)
	return web
}

// get fetches url until it answers (the client sets its port up after
// login), through client.
func get(t *testing.T, client *http.Client, u string, stderr fmt.Stringer) string {
	t.Helper()
	var body string
	eventually(t, 15*time.Second, func() bool {
		resp, err := client.Get(u)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err == nil
	}, "%s never answered; ssh: %s", u, stderr)
	return body
}

func TestLocalForward(t *testing.T) {
	f := newFixture(t)
	web := webServer(t)
	lport := freePort(t)
	_, stderr := f.background([]string{"-N", "-o", "ExitOnForwardFailure=yes", "-L", fmt.Sprintf("%d:%s", lport, web.Listener.Addr())})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	if got := get(t, client, fmt.Sprintf("http://127.0.0.1:%d/", lport), stderr); got != "through the tunnel" {
		t.Fatalf("forwarded answer %q", got)
	}
	// A connection through the tunnel is a channel: an active session,
	// until it closes.
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", lport))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return f.srv.ActiveSessions() == 1 }, "ActiveSessions = %d with a forwarded connection open, want 1", f.srv.ActiveSessions())
	c.Close()
	eventually(t, 5*time.Second, func() bool { return f.srv.ActiveSessions() == 0 }, "ActiveSessions = %d after the forwarded connection closed, want 0", f.srv.ActiveSessions())
}

func TestLocalForwardToUnixSocket(t *testing.T) {
	f := newFixture(t)
	sock := filepath.Join(f.dir, "app.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "through the socket")
	}))
	web.Listener = ln
	web.Start()
	t.Cleanup(web.Close)
	lport := freePort(t)
	_, stderr := f.background([]string{"-N", "-o", "ExitOnForwardFailure=yes", "-L", fmt.Sprintf("%d:%s", lport, sock)})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	if got := get(t, client, fmt.Sprintf("http://127.0.0.1:%d/", lport), stderr); got != "through the socket" {
		t.Fatalf("forwarded answer %q", got)
	}
}

func TestDynamicForward(t *testing.T) {
	f := newFixture(t)
	web := webServer(t)
	lport := freePort(t)
	_, stderr := f.background([]string{"-N", "-o", "ExitOnForwardFailure=yes", "-D", strconv.Itoa(lport)})
	proxy, _ := url.Parse(fmt.Sprintf("socks5://127.0.0.1:%d", lport))
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), DisableKeepAlives: true}, Timeout: 5 * time.Second}
	if got := get(t, client, web.URL, stderr); got != "through the tunnel" {
		t.Fatalf("answer through the SOCKS proxy %q", got)
	}
}

func TestRemoteForward(t *testing.T) {
	f := newFixture(t)
	web := webServer(t)
	// Port 0: the server picks the port and the client prints it.
	_, stderr := f.background([]string{"-N", "-o", "ExitOnForwardFailure=yes", "-R", "0:" + web.Listener.Addr().String()})
	allocated := regexp.MustCompile(`Allocated port (\d+) for remote forward`)
	var port string
	eventually(t, 15*time.Second, func() bool {
		m := allocated.FindStringSubmatch(stderr.String())
		if m != nil {
			port = m[1]
		}
		return m != nil
	}, "no port allocated; ssh: %s", stderr)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	if got := get(t, client, "http://127.0.0.1:"+port+"/", stderr); got != "through the tunnel" {
		t.Fatalf("remote-forwarded answer %q", got)
	}
}

func TestForwardToClosedPortRefused(t *testing.T) {
	f := newFixture(t)
	dead := freePort(t)
	lport := freePort(t)
	_, stderr := f.background([]string{"-N", "-L", fmt.Sprintf("%d:127.0.0.1:%d", lport, dead)})
	var c net.Conn
	eventually(t, 15*time.Second, func() bool {
		var err error
		c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", lport))
		return err == nil
	}, "the client never listened; ssh: %s", stderr)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil || n != 0 {
		t.Fatalf("a forward to a closed port answered: %d %v", n, err)
	}
	eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "open failed") },
		"the client was not told the forward failed: %s", stderr)
}
