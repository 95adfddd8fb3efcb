package netns

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// requireRoot skips without CAP_SYS_ADMIN (making a namespace needs it).
func requireRoot(t *testing.T) {
	t.Helper()
	testenv.Require(t, "root (making a network namespace needs CAP_SYS_ADMIN)", func() error {
		if os.Geteuid() != 0 {
			return errors.New("not root")
		}
		return nil
	}, "run the tests as root")
}

// serve answers every connection on ln with greeting.
func serve(ln net.Listener, greeting string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = io.WriteString(c, greeting)
		c.Close()
	}
}

// runIn runs a bash script in ns and returns its output.
func runIn(t *testing.T, ns *NS, script string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("bash", "-c", script)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := ns.Start(cmd); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	return out.String()
}

// A process started in a namespace of its own reaches what the agent
// listens on in it, never what listens on the host's loopback; the
// agent's listener there is not on the host's loopback either.
func TestOwnNamespaceKeepsTheHostsLoopbackOut(t *testing.T) {
	requireRoot(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go serve(host, "host\n")
	ns, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	inside, err := ns.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inside.Close()
	go serve(inside, "inside\n")

	hostPort := host.Addr().(*net.TCPAddr).Port
	insidePort := inside.Addr().(*net.TCPAddr).Port
	out := runIn(t, ns, "read -r l < /dev/tcp/127.0.0.1/"+itoa(hostPort)+" && echo \"host: $l\" || echo host: refused; "+
		"read -r l < /dev/tcp/127.0.0.1/"+itoa(insidePort)+" && echo \"inside: $l\"")
	if !strings.Contains(out, "host: refused") || !strings.Contains(out, "inside: inside") {
		t.Fatalf("from the namespace:\n%s", out)
	}
	if c, err := net.DialTimeout("tcp", inside.Addr().String(), time.Second); err == nil {
		b, _ := io.ReadAll(c)
		c.Close()
		if string(b) == "inside\n" {
			t.Fatal("the namespace's listener answered on the host's loopback")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := ns.Dial(ctx, "tcp", inside.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "inside\n" {
		t.Fatalf("dial inside read %q", b)
	}
	// The namespace's own processes see only their loopback and nothing
	// else of the host's interfaces.
	if out := runIn(t, ns, "cat /proc/net/dev"); strings.Contains(out, "eth") || !strings.Contains(out, "lo:") {
		t.Fatalf("interfaces in the namespace:\n%s", out)
	}
}

// With slirp4netns the namespace reaches the host's other addresses (the
// outside), never its loopback through the gateway.
func TestOutboundWithoutTheHostsLoopback(t *testing.T) {
	requireRoot(t)
	slirp, err := exec.LookPath("slirp4netns")
	if err != nil {
		testenv.Require(t, "slirp4netns", func() error { return err }, "apt-get install slirp4netns")
	}
	var hostIP net.IP
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			hostIP = ipn.IP
			break
		}
	}
	if hostIP == nil {
		testenv.Require(t, "an IPv4 address besides the loopback (the outside the namespace reaches)", func() error {
			return errors.New("none on any interface")
		}, "give the host a network interface")
	}
	outside, err := net.Listen("tcp", net.JoinHostPort(hostIP.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	go serve(outside, "outside\n")
	loop, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	go serve(loop, "loopback\n")

	ns, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	if err := ns.Outbound(slirp); err != nil {
		t.Fatal(err)
	}
	// The stack comes up while the work starts: wait for the route (a
	// bounded number of tries, not a time limit on the stack).
	out := runIn(t, ns, "for i in $(seq 200); do read -r l < /dev/tcp/"+hostIP.String()+"/"+itoa(outside.Addr().(*net.TCPAddr).Port)+
		" 2>/dev/null && break; sleep 0.05; done; echo \"outside: $l\"; "+
		"read -r m < /dev/tcp/10.0.2.2/"+itoa(loop.Addr().(*net.TCPAddr).Port)+" && echo \"gateway: $m\" || echo gateway: refused")
	if !strings.Contains(out, "outside: outside") || !strings.Contains(out, "gateway: refused") {
		t.Fatalf("from the namespace:\n%s", out)
	}
	// Close ends the stack.
	done := ns.outDone
	ns.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("slirp4netns did not exit after Close")
	}
}

// The stack's sandbox leaves the host's mounts alone: another
// program's named namespaces (`ip netns add`, podman's and CNI's under
// /run/netns) stay usable while a job's stack starts. slirp4netns's
// sandbox detaches its old root, and in a mount namespace that still
// shares /run/netns with the host that detach unmounted every
// namespace there (`ip netns exec: setting the network namespace
// failed: Invalid argument`, podman's `unknown FS magic`).
func TestOutboundLeavesOtherNamedNamespacesAlone(t *testing.T) {
	requireRoot(t)
	slirp, err := exec.LookPath("slirp4netns")
	if err != nil {
		testenv.Require(t, "slirp4netns", func() error { return err }, "apt-get install slirp4netns")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.Require(t, "iproute2", func() error { return err }, "apt-get install iproute2")
	}
	name := "shoal-netns-test-" + itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", name).Run()
	ns, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Outbound(slirp); err != nil {
		t.Fatal(err)
	}
	// The stack is up (and sandboxed) once the namespace has its device.
	out := runIn(t, ns, "for i in $(seq 200); do grep -q tap0 /proc/net/dev && break; sleep 0.05; done; cat /proc/net/dev")
	if !strings.Contains(out, "tap0") {
		t.Fatalf("the stack never came up:\n%s", out)
	}
	done := ns.outDone
	ns.Close()
	<-done
	if out, err := exec.Command("ip", "netns", "exec", name, "true").CombinedOutput(); err != nil {
		t.Fatalf("another program's namespace %s was lost while a stack ran: %v %s", name, err, out)
	}
}

// linksTo counts the paths matching pattern (/proc/self/fd/*,
// /proc/self/task/*/ns/net) whose link reads target.
func linksTo(t *testing.T, pattern, target string) int {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range paths {
		if l, err := os.Readlink(p); err == nil && l == target {
			n++
		}
	}
	return n
}

// Starts in a namespace, many at once, run each process there and bring
// every thread back: the way back is one descriptor of the agent's own
// namespace, opened once and kept, not one opened and closed per start.
func TestStartsComeBackThroughOneDescriptor(t *testing.T) {
	requireRoot(t)
	ns, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	link, err := os.Readlink(ns.Path())
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.Readlink("/proc/self/ns/net")
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			cmd := exec.Command("readlink", "/proc/self/ns/net")
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := ns.Start(cmd); err != nil {
				errs <- err
				return
			}
			err := cmd.Wait()
			if got := strings.TrimSpace(out.String()); err == nil && got != link {
				err = errors.New("a process ran in " + got + ", not " + link)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := linksTo(t, "/proc/self/task/*/ns/net", link); n != 0 {
		t.Fatalf("%d threads of the agent's left in the namespace", n)
	}
	if n := linksTo(t, "/proc/self/fd/*", home); n != 1 {
		t.Fatalf("%d descriptors of the agent's own namespace open, want the one kept to come back through", n)
	}
}
