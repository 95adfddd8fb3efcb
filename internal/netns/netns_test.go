package netns

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/testenv"
)

// otherNamespace starts a process in a network namespace of its own
// (unshare -n, as root) and returns its pid.
func otherNamespace(t *testing.T) int {
	t.Helper()
	testenv.Require(t, "root (entering another network namespace needs CAP_SYS_ADMIN)", func() error {
		if os.Geteuid() != 0 {
			return errors.New("not root")
		}
		_, err := exec.LookPath("unshare")
		return err
	}, "run the tests as root on a host with util-linux's unshare")
	// The new namespace's loopback is down until someone raises it.
	cmd := exec.Command("unshare", "-n", "sh", "-c", "ip link set lo up 2>/dev/null || true; exec sleep 60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	// Wait for the exec: until then the child may still be in ours.
	self, _ := os.Readlink("/proc/self/ns/net")
	for i := 0; i < 100; i++ {
		if ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net"); err == nil && ns != self {
			if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); strings.HasPrefix(string(cmdline), "sleep") {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the process never reached a namespace of its own")
	return 0
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// A listener made in the other namespace is reached by a dial in it and
// not by one from here: it is on that namespace's loopback, not ours.
func TestListenAndDialInAnotherNamespace(t *testing.T) {
	pid := otherNamespace(t)
	ln, err := Listen(pid, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "inside\n")
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		// Something of ours may hold the same port by chance: it must not
		// be the listener above.
		b, _ := io.ReadAll(c)
		c.Close()
		if string(b) == "inside\n" {
			t.Fatalf("%s in the other namespace answered a dial from this one", addr)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, pid, "tcp", addr)
	if err != nil {
		t.Fatalf("dial %s inside: %v", addr, err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "inside\n" {
		t.Fatalf("read %q from inside, want the listener's greeting", b)
	}
	// The thread that went in came back: a plain listener here is ours.
	here, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	here.Close()
}

func TestNoProcess(t *testing.T) {
	if _, err := Listen(0, "tcp", "127.0.0.1:0"); err == nil {
		t.Fatal("Listen in pid 0's namespace succeeded")
	}
	if _, err := Dial(context.Background(), 1<<30, "tcp", "127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "network namespace of process") {
		t.Fatalf("Dial in a process that does not exist: %v", err)
	}
}
