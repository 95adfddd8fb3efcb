package containertest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/agent/container"
)

// execer is h's Runtime as an Execer; every engine here is one.
func execer(t *testing.T, h Harness) container.Execer {
	t.Helper()
	ex, ok := h.Runtime.(container.Execer)
	if !ok {
		t.Fatalf("%T is not a container.Execer", h.Runtime)
	}
	return ex
}

// longRunning starts a container that sleeps, for execs to enter.
func longRunning(t *testing.T, h Harness, network string) string {
	t.Helper()
	id, err := h.Runtime.Run(ctxFor(t, time.Minute), container.Spec{Image: h.BaseImage, Command: []string{"sleep", "600"}, Network: network})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Runtime.Remove(context.Background(), id) })
	return id
}

// readAll reads r to its end, within a bound.
func readAll(t *testing.T, what string, r io.Reader) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(time.Minute):
		t.Fatalf("%s did not end", what)
		return ""
	}
}

func testExec(t *testing.T, h Harness) {
	ex := execer(t, h)
	id := longRunning(t, h, "")
	p, err := ex.Exec(ctxFor(t, time.Minute), id, container.ExecSpec{
		Command: []string{"sh", "-c", `echo "uid $(id -u):$(id -g)"; echo "cwd $(pwd)"; echo "env $SHOAL_PROBE"; echo to-stderr >&2; cat; echo after-eof; exit 7`},
		User:    "1234:1234", Env: []string{"SHOAL_PROBE=a value = with equals"}, WorkingDir: "/tmp",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	errc := make(chan string, 1)
	go func() { b, _ := io.ReadAll(p.Stderr()); errc <- string(b) }()
	if _, err := io.WriteString(p.Stdin(), "typed in\n"); err != nil {
		t.Fatal(err)
	}
	if err := p.Stdin().Close(); err != nil {
		t.Fatal(err)
	}
	out := readAll(t, "stdout", p.Stdout())
	if want := "uid 1234:1234\ncwd /tmp\nenv a value = with equals\ntyped in\nafter-eof\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if e := <-errc; e != "to-stderr\n" {
		t.Errorf("stderr %q, want the process's stderr alone", e)
	}
	code, err := p.Wait(ctxFor(t, time.Minute))
	if err != nil || code != 7 {
		t.Errorf("exit %d (%v), want 7", code, err)
	}
}

func testExecTerminal(t *testing.T, h Harness) {
	ex := execer(t, h)
	id := longRunning(t, h, "")
	p, err := ex.Exec(ctxFor(t, time.Minute), id, container.ExecSpec{
		Command: []string{"sh", "-c", `stty size; [ -t 0 ] && echo on-a-tty; read x; stty size; echo "got $x"`},
		TTY:     true, Cols: 100, Rows: 30,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := bufio.NewReader(p.Stdout())
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				lines <- strings.TrimRight(l, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	expect := func(want string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the output ended before %q", want)
				}
				t.Logf("line %q", l)
				if l == want {
					return
				}
			case <-deadline:
				t.Fatalf("no line %q", want)
			}
		}
	}
	expect("30 100")
	expect("on-a-tty")
	if err := p.Resize(ctxFor(t, time.Minute), 120, 40); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(p.Stdin(), "hello\r"); err != nil {
		t.Fatal(err)
	}
	expect("40 120")
	expect("got hello")
	code, err := p.Wait(ctxFor(t, time.Minute))
	if err != nil || code != 0 {
		t.Errorf("exit %d (%v), want 0", code, err)
	}
}

func testExecSignal(t *testing.T, h Harness) {
	ex := execer(t, h)
	id := longRunning(t, h, "")
	p, err := ex.Exec(ctxFor(t, time.Minute), id, container.ExecSpec{Command: []string{"sleep", "300"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pid, err := p.PID(ctxFor(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// The id is this host's: /proc here shows the process. It is the
	// runtime's init ("runc:[2:INIT]") until that execs the command, which
	// a busy machine can hold up past PID's answer (seen once under the
	// test command's load, 2026-12-01): the same pid, soon sleep.
	// At most 500 looks 20 ms apart (10 s): counted, not read off the
	// wall clock.
	var comm []byte
	for look := 0; ; look++ {
		comm, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		if err == nil && strings.TrimSpace(string(comm)) == "sleep" {
			break
		}
		if err != nil || !strings.HasPrefix(string(comm), "runc:") || look >= 500 {
			t.Fatalf("host pid %d: comm %q (%v), want sleep", pid, comm, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.Signal(ctxFor(t, time.Minute), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	readAll(t, "stdout", p.Stdout())
	code, err := p.Wait(ctxFor(t, time.Minute))
	if err != nil || code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d (%v), want %d (SIGTERM)", code, err, 128+int(syscall.SIGTERM))
	}
}

func testExecRefusesBadSpec(t *testing.T, h Harness) {
	ex := execer(t, h)
	id := longRunning(t, h, "")
	ctx := ctxFor(t, time.Minute)
	for _, c := range []struct {
		name  string
		spec  container.ExecSpec
		field string
	}{
		{"no command", container.ExecSpec{}, "Command"},
		{"bad user", container.ExecSpec{Command: []string{"true"}, User: "no body"}, "User"},
		{"env without =", container.ExecSpec{Command: []string{"true"}, Env: []string{"A"}}, "Env[0]"},
		{"relative workdir", container.ExecSpec{Command: []string{"true"}, WorkingDir: "tmp"}, "WorkingDir"},
	} {
		_, err := ex.Exec(ctx, id, c.spec)
		wantKind(t, c.name, err, container.ErrInvalid)
		if err != nil && !strings.Contains(err.Error(), "exec."+c.field) {
			t.Errorf("%s: the error does not name exec.%s: %v", c.name, c.field, err)
		}
	}
	_, err := ex.Exec(ctx, "shoal-absent-"+token(), container.ExecSpec{Command: []string{"true"}})
	wantKind(t, "exec in an unknown container", err, container.ErrNotFound)
}

// testDialInNetwork listens on the same loopback port on the host and
// inside a container with a network of its own: Dial reaches the
// container's.
func testDialInNetwork(t *testing.T, h Harness) {
	ex := execer(t, h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "the host")
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	id := longRunning(t, h, "none")
	p, err := ex.Exec(ctxFor(t, time.Minute), id, container.ExecSpec{Command: []string{"python3", "-u", "-c", fmt.Sprintf(`
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", %d)); s.listen(); print("ready", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"the container\n"); c.close()`, port)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if line, _ := bufio.NewReader(p.Stdout()).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the server in the container: %q", line)
	}
	c, err := ex.Dial(ctxFor(t, time.Minute), id, "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, _ := bufio.NewReader(c).ReadString('\n'); got != "the container\n" {
		t.Errorf("dialled %s in the container: %q, want the container's server", l.Addr(), got)
	}
	// The thread went back: a plain dial reaches the host's.
	hc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if got, _ := bufio.NewReader(hc).ReadString('\n'); got != "the host\n" {
		t.Errorf("dialled %s on the host: %q", l.Addr(), got)
	}
}
