package portowner

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/internal/procmark"
)

// helperEnv makes the test binary, run again, a process that listens on
// 127.0.0.1:0, prints its port and waits for its stdin to close.
const helperEnv = "PORTOWNER_TEST_LISTEN"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		l, err := net.Listen("tcp", os.Getenv(helperEnv))
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// mark is a node mark no other process on the host carries.
func mark(t *testing.T) []string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return procmark.Node("test-"+hex.EncodeToString(b), "/nonexistent/"+hex.EncodeToString(b))
}

// listenChild starts a process with env listening on addr and returns its
// port and pid.
func listenChild(t *testing.T, addr string, env []string) (int, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), helperEnv+"="+addr)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the listening child: %v", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	return port, cmd.Process.Pid
}

func TestCheckRefusesAListenerWithoutTheMark(t *testing.T) {
	m := mark(t)
	own := func(pid int) bool { return procmark.Carries(pid, m...) }
	// The test's own listener, like any process not of the instance.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	ls, err := Loopback(port)
	if err != nil || len(ls) != 1 || !hasPID(ls[0].PIDs, os.Getpid()) {
		t.Fatalf("Loopback(%d) = %+v, %v; want one socket held by the test (pid %d)", port, ls, err, os.Getpid())
	}
	err = Check(port, own)
	if err == nil || errors.Is(err, ErrNoListener) || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("Check on the test's own listener: %v; want a refusal naming pid %d", err, os.Getpid())
	}
	// Another process without the mark, on every address.
	port, _ = listenChild(t, "0.0.0.0:0", nil)
	if err := Check(port, own); err == nil {
		t.Fatal("a listener on 0.0.0.0 without the mark passed")
	}
	port, _ = listenChild(t, "[::]:0", nil)
	if err := Check(port, own); err == nil {
		t.Fatal("a listener on :: without the mark passed")
	}
}

func TestCheckAcceptsAMarkedListener(t *testing.T) {
	m := mark(t)
	own := func(pid int) bool { return procmark.Carries(pid, m...) }
	for _, addr := range []string{"127.0.0.1:0", "0.0.0.0:0", "[::]:0"} {
		port, pid := listenChild(t, addr, m)
		if err := Check(port, own); err != nil {
			t.Errorf("%s: a listener carrying the mark (pid %d): %v", addr, pid, err)
		}
		// Another mark does not do.
		other := mark(t)
		if err := Check(port, func(pid int) bool { return procmark.Carries(pid, other...) }); err == nil {
			t.Errorf("%s: a listener passed for another node's mark", addr)
		}
	}
}

func TestCheckNothingListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if err := Check(port, func(int) bool { return true }); !errors.Is(err, ErrNoListener) {
		t.Fatalf("Check on a closed port: %v; want ErrNoListener", err)
	}
	if err := Check(0, func(int) bool { return true }); err == nil {
		t.Fatal("port 0 passed")
	}
}

// CheckIn reads the tables of the namespace it is given: a listener in
// this one is found through any process of it (the child itself), and
// not through a process in a namespace of its own, whose loopback has
// nothing on that port.
func TestCheckInNamespace(t *testing.T) {
	m := mark(t)
	own := func(pid int) bool { return procmark.Carries(pid, m...) }
	port, pid := listenChild(t, "127.0.0.1:0", m)
	if err := CheckIn(pid, port, own); err != nil {
		t.Fatalf("CheckIn through the listener's own pid: %v", err)
	}
	if err := CheckIn(0, port, own); err == nil {
		t.Fatal("CheckIn with no process passed")
	}
	if os.Geteuid() != 0 {
		return // unshare -n needs root; the rest is covered where it runs
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return
	}
	other := exec.Command("unshare", "-n", "sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	self, _ := os.Readlink("/proc/self/ns/net")
	for i := 0; i < 200; i++ {
		if ns, _ := os.Readlink("/proc/" + strconv.Itoa(other.Process.Pid) + "/ns/net"); ns != "" && ns != self {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := CheckIn(other.Process.Pid, port, own); !errors.Is(err, ErrNoListener) {
		t.Fatalf("CheckIn in another namespace: %v; want ErrNoListener (the listener is in ours)", err)
	}
}
