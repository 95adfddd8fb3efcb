package sshd_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Some requests the OpenSSH client sends only from a real terminal
// (window-change) or never on its own (signal): these tests send them
// with the Go SSH client.

func goClient(t *testing.T, f *fixture) *ssh.Client {
	t.Helper()
	b, err := os.ReadFile(f.key)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := os.ReadFile(f.hostKey)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ssh.ParsePrivateKey(hostKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", f.srv.Addr().String(), &ssh.ClientConfig{
		User: "azureuser", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(host.PublicKey()), Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// within fails the test if fn does not return in time.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not finish within %v", what, d)
	}
}

// readUntil reads lines until one contains want.
func readUntil(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	var seen strings.Builder
	within(t, 10*time.Second, "waiting for "+want, func() {
		for {
			line, err := r.ReadString('\n')
			seen.WriteString(line)
			if strings.Contains(line, want) || err != nil {
				return
			}
		}
	})
	if !strings.Contains(seen.String(), want) {
		t.Fatalf("no %q in %q", want, seen.String())
	}
}

func TestWindowChange(t *testing.T) {
	f := newFixture(t)
	s, err := goClient(t, f).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RequestPty("xterm", 40, 100, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	stdin, _ := s.StdinPipe()
	stdout, _ := s.StdoutPipe()
	out := bufio.NewReader(stdout)
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(stdin, "echo size=$(stty size)\n")
	readUntil(t, out, "size=40 100")
	if err := s.WindowChange(50, 132); err != nil {
		t.Fatal(err)
	}
	// The resize reaches the pty after the request is answered, so a
	// command written at once may still see the old size (it did on a
	// loaded machine): ask again until the new size shows.
	asked, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			_, _ = io.WriteString(stdin, "echo size=$(stty size)\n")
			select {
			case <-asked:
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	readUntil(t, out, "size=50 132")
	close(asked)
	<-stopped // one writer at a time on the session's stdin
	_, _ = io.WriteString(stdin, "exit 6\n")
	within(t, 10*time.Second, "the shell's exit", func() {
		var ee *ssh.ExitError
		if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 6 {
			t.Errorf("exit: %v, want status 6", err)
		}
	})
}

func TestSignalRequest(t *testing.T) {
	f := newFixture(t)
	s, err := goClient(t, f).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stdout, _ := s.StdoutPipe()
	out := bufio.NewReader(stdout)
	if err := s.Start("trap 'echo got-int; exit 7' INT; echo ready; while :; do sleep 0.1; done"); err != nil {
		t.Fatal(err)
	}
	readUntil(t, out, "ready")
	if err := s.Signal(ssh.SIGINT); err != nil {
		t.Fatal(err)
	}
	readUntil(t, out, "got-int")
	within(t, 10*time.Second, "the command's exit", func() {
		var ee *ssh.ExitError
		if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 7 {
			t.Errorf("exit: %v, want status 7", err)
		}
	})
}

func TestExitSignalReported(t *testing.T) {
	f := newFixture(t)
	s, err := goClient(t, f).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	within(t, 10*time.Second, "the command", func() {
		var ee *ssh.ExitError
		if err := s.Run("kill -TERM $$"); !errors.As(err, &ee) || ee.Signal() != "TERM" {
			t.Errorf("exit: %v, want signal TERM", err)
		}
	})
}

func TestRequestsRefused(t *testing.T) {
	f := newFixture(t)
	c := goClient(t, f)
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Setenv("LD_PRELOAD", "/tmp/evil.so"); err == nil {
		t.Error("LD_PRELOAD accepted")
	}
	if err := s.Setenv("LC_ALL", "C.UTF-8"); err != nil {
		t.Errorf("LC_ALL refused: %v", err)
	}
	if err := s.RequestSubsystem("netconf"); err == nil {
		t.Error("an unknown subsystem accepted")
	}
	if ok, _, err := c.SendRequest("no-such-request@example.com", true, nil); ok || err != nil {
		t.Errorf("an unknown global request: %v %v", ok, err)
	}
	if ok, _, err := c.SendRequest("keepalive@openssh.com", true, nil); !ok || err != nil {
		t.Errorf("keepalive not answered: %v %v", ok, err)
	}
	if _, _, err := c.OpenChannel("x11", nil); err == nil {
		t.Error("an x11 channel opened")
	}
	if _, err := c.Dial("tcp", net.JoinHostPort("127.0.0.1", "1")); err == nil {
		t.Error("a forward to a closed port succeeded")
	}
	// One program per channel.
	s2, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	out, _ := s2.StdoutPipe()
	if err := s2.Start("cat"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s2.SendRequest("exec", true, ssh.Marshal(struct{ Command string }{"echo second"})); ok || err != nil {
		t.Errorf("a second exec on a channel: %v %v", ok, err)
	}
	_ = out
}
