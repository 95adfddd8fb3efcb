package sshd_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/internal/netns"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// With a Network (the instance's namespace), a session's command, a -L
// forward and a -R forward are all on the namespace's loopback: the
// command and -L reach what listens there and not what listens on the
// host's loopback, and -R's port is opened there, not on the host.
func TestSessionsAndForwardsInTheInstancesNetwork(t *testing.T) {
	testenv.Root(t, "makes network namespaces")
	ns, err := netns.New()
	if err != nil {
		testenv.Require(t, "network namespaces", func() error { return err }, "a kernel that allows unshare(CLONE_NEWNET)")
	}
	t.Cleanup(func() { ns.Close() })
	inside, err := ns.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(inside, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "inside the instance") }))
	t.Cleanup(func() { inside.Close() })
	web := webServer(t) // on the host's loopback
	f := newFixtureWith(t, t.TempDir(), nil, func(c *sshd.Config) { c.Network = ns })
	insidePort := inside.Addr().(*net.TCPAddr).Port
	hostPort := web.Listener.Addr().(*net.TCPAddr).Port

	probe := `for p in %d %d; do if exec 3<>/dev/tcp/127.0.0.1/$p; then printf 'GET / HTTP/1.0\r\n\r\n' >&3; echo "$p: $(tail -n 1 <&3)"; exec 3<&-; else echo "$p: refused"; fi; done 2>/dev/null`
	r := f.ssh(fmt.Sprintf(probe, insidePort, hostPort))
	if want := fmt.Sprintf("%d: inside the instance", insidePort); !strings.Contains(r.out, want) {
		t.Errorf("the session did not reach the instance's loopback: %q (stderr %q)", r.out, r.err)
	}
	if want := fmt.Sprintf("%d: refused", hostPort); !strings.Contains(r.out, want) || strings.Contains(r.out, "through the tunnel") {
		t.Errorf("the session reached the host's loopback: %q", r.out)
	}

	lport := freePort(t)
	_, stderr := f.background([]string{"-N", "-o", "ExitOnForwardFailure=yes", "-L", fmt.Sprintf("%d:localhost:%d", lport, insidePort),
		"-R", "0:" + web.Listener.Addr().String()})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	if got := get(t, client, fmt.Sprintf("http://127.0.0.1:%d/", lport), stderr); got != "inside the instance" {
		t.Fatalf("-L answer %q", got)
	}
	allocated := regexp.MustCompile(`Allocated port (\d+) for remote forward`)
	var port string
	eventually(t, 15*time.Second, func() bool {
		m := allocated.FindStringSubmatch(stderr.String())
		if m != nil {
			port = m[1]
		}
		return m != nil
	}, "no port allocated; ssh: %s", stderr)
	inNS := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) { return ns.Dial(ctx, network, addr) }}}
	if got := get(t, inNS, "http://127.0.0.1:"+port+"/", stderr); got != "through the tunnel" {
		t.Fatalf("-R answer inside the instance %q", got)
	}
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Errorf("-R's port %s is open on the host's loopback", port)
	}
}
