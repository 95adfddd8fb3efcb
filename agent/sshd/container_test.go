package sshd_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/container"
	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/internal/testctr"
)

func TestMain(m *testing.M) {
	// Run as `<copy> agent sftp-server`, the test binary is the agent's
	// copy of itself that serves SFTP as a login's account (see
	// TestSFTPWithTheAgentsCopy), as the shoal binary's hidden command is.
	if len(os.Args) == 3 && os.Args[1] == "agent" && os.Args[2] == "sftp-server" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "/"
		}
		if err := sshd.ServeStdio(home); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testctr.Main(m))
}

// instanceDockerfile derives an instance-like image from the test base
// image (Debian 12 minbase with python3): an azureuser with a home, a
// file only the image has, and OpenSSH's sftp-server copied from this
// host (Debian 12 as well, and it links only libc), so that no package
// needs fetching during the build.
const instanceDockerfile = `FROM %s
COPY sftp-server /usr/lib/openssh/sftp-server
RUN echo 'azureuser:x:1000:1000:azureuser:/home/azureuser:/bin/bash' >> /etc/passwd && \
    echo 'azureuser:x:1000:' >> /etc/group && \
    mkdir -p /home/azureuser && chown 1000:1000 /home/azureuser && \
    echo only-in-the-image > /etc/shoal-image-marker
`

// instanceContainer builds the instance image (with sftp-server or
// without) and runs a long-lived container of it, as an instance is.
func instanceContainer(t *testing.T, withSFTP bool) (*container.Engine, string) {
	t.Helper()
	env := testctr.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := container.Open(ctx, container.Config{Host: env.Host, EnginePID: env.Podman.PID()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	dir := t.TempDir()
	df := fmt.Sprintf(instanceDockerfile, env.BaseImage)
	if withSFTP {
		b, err := os.ReadFile("/usr/lib/openssh/sftp-server")
		if err != nil {
			t.Fatalf("this host's sftp-server, copied into the test image: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sftp-server"), b, 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		df = strings.Replace(df, "COPY sftp-server /usr/lib/openssh/sftp-server\n", "", 1)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := "localhost/shoal-test/instance:" + map[bool]string{true: "sftp", false: "plain"}[withSFTP]
	img, err := e.Build(ctx, container.BuildOptions{ContextDir: dir, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	id, err := e.Run(ctx, container.Spec{Name: "shoal-test-ssh-" + randomName(), Image: img.ID, Command: []string{"sleep", "3600"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Remove(context.Background(), id) })
	return e, id
}

func randomName() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestContainerSessions: with a container target, every way in lands in
// the container as azureuser: ssh with and without a terminal, env
// requests, stdin and exit codes, window changes and signals, sftp and
// scp in its file system, -L forwards from its network, and hangups
// reach its processes.
func TestContainerSessions(t *testing.T) {
	e, id := instanceContainer(t, true)
	f := newFixtureIn(t, &sshd.ContainerTarget{Runtime: e, ID: id})
	host, _ := os.Hostname()

	t.Run("LandsInTheContainer", func(t *testing.T) {
		r := f.ssh(`hostname; cat /etc/shoal-image-marker; . /etc/os-release; echo "$ID $VERSION_ID"; id -un; pwd; echo "$HOME $USER $SHOAL_TEST_VAR"`)
		if r.code != 0 {
			t.Fatalf("exit %d, stderr %s", r.code, r.err)
		}
		want := fmt.Sprintf("%s\nonly-in-the-image\ndebian 12\nazureuser\n/home/azureuser\n/home/azureuser azureuser instance\n", id[:12])
		if r.out != want {
			t.Errorf("got %q, want %q (the container's hostname, the image's files, azureuser in its home)", r.out, want)
		}
		if strings.HasPrefix(r.out, host+"\n") {
			t.Errorf("the hostname is the host's, %s", host)
		}
		if _, err := os.Stat("/etc/shoal-image-marker"); err == nil {
			t.Fatal("the marker is on the host too: the test proves nothing")
		}
	})

	t.Run("StdinStderrExitCode", func(t *testing.T) {
		r := f.run("typed in\n", "ssh", append(f.opts(f.key), "-p", f.port(), "azureuser@127.0.0.1", "cat; echo to-stderr >&2; exit 3")...)
		if r.code != 3 || r.out != "typed in\n" || r.err != "to-stderr\n" {
			t.Errorf("exit %d, stdout %q, stderr %q; want 3, the input, the stderr apart", r.code, r.out, r.err)
		}
	})

	t.Run("EnvRequest", func(t *testing.T) {
		r := f.sshAs(f.key, "azureuser", []string{"-o", "SetEnv=LC_SHOAL=fr_FR PATH=/nowhere"}, `echo "$LC_SHOAL"; command -v sh`)
		if r.code != 0 || r.out != "fr_FR\n/usr/bin/sh\n" && r.out != "fr_FR\n/bin/sh\n" {
			t.Errorf("exit %d, %q (%s); want LC_SHOAL accepted, PATH refused", r.code, r.out, r.err)
		}
	})

	t.Run("Terminal", func(t *testing.T) {
		r := f.sshAs(f.key, "azureuser", []string{"-tt"}, `tty; echo "term=$TERM"; id -un`)
		if r.code != 0 || !strings.Contains(r.out, "/dev/pts/") || !strings.Contains(r.out, "azureuser") {
			t.Errorf("exit %d, %q (%s); want a terminal in the container", r.code, r.out, r.err)
		}
	})

	t.Run("WindowChange", func(t *testing.T) {
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
		_, _ = io.WriteString(stdin, "echo size=$(stty size) user=$(id -un)\n")
		readUntil(t, out, "size=40 100 user=azureuser")
		if err := s.WindowChange(50, 132); err != nil {
			t.Fatal(err)
		}
		// The resize goes through the engine while the typed line goes
		// straight to the terminal: the line may come first (a person
		// types later), so ask again until the size shows.
		sizeSeen := false
		for try := 0; try < 20 && !sizeSeen; try++ {
			_, _ = io.WriteString(stdin, "echo size=$(stty size)\n")
			within(t, 10*time.Second, "the size's line", func() {
				for {
					line, err := out.ReadString('\n')
					if err != nil {
						return
					}
					// Not the echo of the typed line; the answer may
					// follow the shell's escape sequences.
					if strings.Contains(line, "size=") && !strings.Contains(line, "echo") {
						sizeSeen = strings.Contains(line, "size=50 132")
						return
					}
				}
			})
			if !sizeSeen {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if !sizeSeen {
			t.Fatal("stty never saw the new size 50x132")
		}
		_, _ = io.WriteString(stdin, "exit 6\n")
		within(t, 10*time.Second, "the shell's exit", func() {
			var ee *ssh.ExitError
			if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 6 {
				t.Errorf("exit: %v, want status 6", err)
			}
		})
	})

	t.Run("SignalRequest", func(t *testing.T) {
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
	})

	t.Run("SignalToTheForegroundJob", func(t *testing.T) {
		// A signal request on a terminal reaches the terminal's
		// foreground job, as ^C would: the sleep dies, the shell stays.
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
		_, _ = io.WriteString(stdin, "echo shell-ready\n")
		readUntil(t, out, "shell-ready")
		count := `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 100 '`
		// The sleep alone on its line: an interactive bash drops the
		// rest of a line whose foreground job died of SIGINT, as on ^C.
		// The signal waits until the sleep runs, not for the line's
		// echo, which comes before the job is the foreground.
		_, _ = io.WriteString(stdin, "sleep 100\n")
		eventually(t, 15*time.Second, func() bool { return f.ssh(count).out == "1\n" }, "the terminal's sleep never ran in the container")
		if err := s.Signal(ssh.SIGINT); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() bool { return f.ssh(count).out == "0\n" }, "the sleep still runs after the signal request")
		_, _ = io.WriteString(stdin, "echo fg-ended=$?\n")
		readUntil(t, out, "fg-ended=130")
		// ^C as OpenSSH sends it, a byte through the terminal, whose
		// line discipline in the container signals the job.
		_, _ = io.WriteString(stdin, "sleep 100\n")
		eventually(t, 15*time.Second, func() bool { return f.ssh(count).out == "1\n" }, "the second sleep never ran in the container")
		_, _ = io.WriteString(stdin, "\x03")
		eventually(t, 10*time.Second, func() bool { return f.ssh(count).out == "0\n" }, "the sleep still runs after ^C")
		_, _ = io.WriteString(stdin, "echo still-here; exit 6\n")
		readUntil(t, out, "still-here")
		within(t, 10*time.Second, "the shell's exit", func() {
			var ee *ssh.ExitError
			if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 6 {
				t.Errorf("exit: %v, want status 6 from the shell that survived", err)
			}
		})
	})

	t.Run("SFTP", func(t *testing.T) {
		local := filepath.Join(f.dir, "up.txt")
		if err := os.WriteFile(local, []byte("sent by sftp\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		back := filepath.Join(f.dir, "down.txt")
		batch := filepath.Join(f.dir, "batch")
		if err := os.WriteFile(batch, []byte("put "+local+" in-container.txt\nget in-container.txt "+back+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := f.run("", "sftp", append(f.opts(f.key), "-P", f.port(), "-b", batch, "azureuser@127.0.0.1")...)
		if r.code != 0 {
			t.Fatalf("sftp: exit %d, stdout %s, stderr %s", r.code, r.out, r.err)
		}
		if b, err := os.ReadFile(back); err != nil || string(b) != "sent by sftp\n" {
			t.Errorf("got back %q (%v)", b, err)
		}
		r = f.ssh(`stat -c '%U %n' /home/azureuser/in-container.txt`)
		if r.out != "azureuser /home/azureuser/in-container.txt\n" {
			t.Errorf("in the container: %q (%s), want azureuser's file in its home", r.out, r.err)
		}
	})

	t.Run("SCP", func(t *testing.T) {
		local := filepath.Join(f.dir, "scp-up.txt")
		if err := os.WriteFile(local, []byte("sent by scp\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append(f.opts(f.key), "-P", f.port(), local, "azureuser@127.0.0.1:scp.txt")
		if r := f.run("", "scp", args...); r.code != 0 {
			t.Fatalf("scp up: exit %d, %s", r.code, r.err)
		}
		back := filepath.Join(f.dir, "scp-down.txt")
		args = append(f.opts(f.key), "-P", f.port(), "azureuser@127.0.0.1:/home/azureuser/scp.txt", back)
		if r := f.run("", "scp", args...); r.code != 0 {
			t.Fatalf("scp down: exit %d, %s", r.code, r.err)
		}
		if b, err := os.ReadFile(back); err != nil || string(b) != "sent by scp\n" {
			t.Errorf("got back %q (%v)", b, err)
		}
		if r := f.ssh("cat scp.txt; stat -c %U scp.txt"); r.out != "sent by scp\nazureuser\n" {
			t.Errorf("in the container: %q (%s)", r.out, r.err)
		}
	})

	t.Run("LocalForward", func(t *testing.T) {
		// A server on the container's loopback only: the host has
		// nothing on that port.
		port := freePort(t)
		f.background(nil, fmt.Sprintf("cd /etc && exec python3 -m http.server --bind 127.0.0.1 %d", port))
		lport := freePort(t)
		_, stderr := f.background([]string{"-N", "-o", "ExitOnForwardFailure=yes", "-L", fmt.Sprintf("%d:127.0.0.1:%d", lport, port)})
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
		if got := get(t, client, fmt.Sprintf("http://127.0.0.1:%d/shoal-image-marker", lport), stderr); got != "only-in-the-image\n" {
			t.Fatalf("forwarded answer %q, want the container's server", got)
		}
		if c, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
			c.Body.Close()
			t.Errorf("the container's port %d answers on the host: the forward proves nothing", port)
		}
	})

	t.Run("RemoteForward", func(t *testing.T) {
		// The port opens on the container's loopback: a process inside
		// reaches the client's server through it, the host does not.
		web := webServer(t)
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
		r := f.ssh("python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:" + port + "/', timeout=5).read().decode())\"")
		if r.out != "through the tunnel\n" {
			t.Errorf("the forwarded port from inside the container: %q (%s)", r.out, r.err)
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
			c.Close()
			t.Errorf("the remote forward's port %s answers on the host's loopback, not only the container's", port)
		}
	})

	t.Run("HangupEndsTheProcesses", func(t *testing.T) {
		count := `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 301'`
		cmd, _ := f.background(nil, "sleep 301")
		eventually(t, 15*time.Second, func() bool { return f.ssh(count).out == "1\n" }, "the session's sleep never ran in the container")
		_ = cmd.Process.Kill()
		eventually(t, 15*time.Second, func() bool { return f.ssh(count).out == "0\n" }, "the hung-up session's sleep still runs in the container")
	})
}

// Without sftp-server in the image, sftp fails saying what to install.
func TestContainerWithoutSFTPServer(t *testing.T) {
	e, id := instanceContainer(t, false)
	f := newFixtureIn(t, &sshd.ContainerTarget{Runtime: e, ID: id})
	batch := filepath.Join(f.dir, "batch")
	if err := os.WriteFile(batch, []byte("pwd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := f.run("", "sftp", append(f.opts(f.key), "-P", f.port(), "-b", batch, "azureuser@127.0.0.1")...)
	if r.code == 0 || !strings.Contains(r.err, "no sftp-server") || !strings.Contains(r.err, "openssh-sftp-server") {
		t.Errorf("exit %d, stderr %q; want a failure naming the missing sftp-server and its package", r.code, r.err)
	}
}
