package sshd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/domain/core/coretest"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// The tests drive the server with the real OpenSSH client binaries, as
// users do; without the client they skip, saying so, and under
// SHOAL_TEST_REQUIRE_ALL (scripts/test) fail, so that a CI without it
// cannot pass unnoticed.

// commandTimeout bounds every client command, so that nothing hangs.
const commandTimeout = 30 * time.Second

func openssh(t *testing.T, name string) string {
	t.Helper()
	return testenv.OpenSSH(t, name)
}

// fixture is a server with a home, a host key, a known_hosts file that
// trusts it and a client key it authorizes.
type fixture struct {
	t       *testing.T
	dir     string
	home    string
	hostKey string
	known   string
	key     string // the client's private key file
	pub     ssh.PublicKey
	clock   *coretest.Clock
	srv     *sshd.Server
	// target, when set, is the container sessions run in.
	target *sshd.ContainerTarget
	// configure, when set, changes the server's config before it starts
	// (an account to run as, an SFTP command).
	configure func(*sshd.Config)

	mu   sync.Mutex
	keys []ssh.PublicKey
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureIn(t, nil)
}

// newFixtureIn is newFixture with sessions in the container target
// (on the host when nil).
func newFixtureIn(t *testing.T, target *sshd.ContainerTarget) *fixture {
	t.Helper()
	return newFixtureWith(t, t.TempDir(), target, nil)
}

// newFixtureWith is newFixtureIn in dir, with configure changing the
// server's config.
func newFixtureWith(t *testing.T, dir string, target *sshd.ContainerTarget, configure func(*sshd.Config)) *fixture {
	t.Helper()
	f := &fixture{
		t: t, dir: dir, home: filepath.Join(dir, "home"), hostKey: filepath.Join(dir, "keys", "ssh_host_ed25519_key"),
		known: filepath.Join(dir, "known_hosts"), clock: coretest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		target: target, configure: configure,
	}
	if err := os.MkdirAll(f.home, 0o700); err != nil {
		t.Fatal(err)
	}
	f.key, f.pub = newKey(t, dir, "id_ed25519", "ed25519")
	f.setKeys(f.pub)
	f.start("127.0.0.1:0")
	t.Cleanup(func() { f.srv.Close() })
	return f
}

func (f *fixture) setKeys(keys ...ssh.PublicKey) {
	f.mu.Lock()
	f.keys = keys
	f.mu.Unlock()
}

// start starts the server and trusts its host key in known_hosts.
func (f *fixture) start(listen string) {
	f.t.Helper()
	cfg := sshd.Config{
		Listen: listen, HostKeyPath: f.hostKey, HomeDir: f.home, Now: f.clock.Now,
		AuthorizedKeys: func() []ssh.PublicKey {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.keys
		},
		Env:       func() []string { return []string{"SHOAL_TEST_VAR=instance"} },
		Container: f.target,
	}
	if f.configure != nil {
		f.configure(&cfg)
	}
	srv, err := sshd.Start(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.srv = srv
	pub, err := os.ReadFile(f.hostKey)
	if err != nil {
		f.t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pub)
	if err != nil {
		f.t.Fatal(err)
	}
	line := fmt.Sprintf("[127.0.0.1]:%d %s", srv.Addr().Port, ssh.MarshalAuthorizedKey(signer.PublicKey()))
	if err := os.WriteFile(f.known, []byte(line), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) port() string { return strconv.Itoa(f.srv.Addr().Port) }

// opts are the client options of every test: no user configuration, no
// agent, no prompt, only the given key, and the host key checked.
func (f *fixture) opts(key string) []string {
	return []string{
		"-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
		"-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=" + f.known, "-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "ConnectTimeout=10", "-i", key,
	}
}

// result is what a client command did.
type result struct {
	out, err string
	code     int
}

// run runs an OpenSSH client binary to its end, within commandTimeout.
func (f *fixture) run(stdin string, name string, args ...string) result {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, openssh(f.t, name), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		f.t.Fatalf("%s %v did not end within %v; stderr: %s", name, args, commandTimeout, errb.String())
	case errors.As(err, &ee):
		return result{out.String(), errb.String(), ee.ExitCode()}
	case err != nil:
		f.t.Fatal(err)
	}
	return result{out.String(), errb.String(), 0}
}

// sshAs runs `ssh [extra] user@host command` with key.
func (f *fixture) sshAs(key, user string, extra []string, command ...string) result {
	f.t.Helper()
	args := append(f.opts(key), extra...)
	args = append(args, "-p", f.port(), user+"@127.0.0.1")
	return f.run("", "ssh", append(args, command...)...)
}

// ssh runs a command as the authorized user.
func (f *fixture) ssh(command ...string) result {
	f.t.Helper()
	return f.sshAs(f.key, "azureuser", nil, command...)
}

// background starts `ssh [extra] azureuser@host command` and leaves it
// running; it is killed at the end of the test.
func (f *fixture) background(extra []string, command ...string) (*exec.Cmd, *syncBuffer) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	args := append(f.opts(f.key), extra...)
	args = append(args, "-p", f.port(), "azureuser@127.0.0.1")
	cmd := exec.CommandContext(ctx, openssh(f.t, "ssh"), append(args, command...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	// A stdin that stays open, as a user's terminal does: the command
	// does not see EOF before the test ends it.
	if _, err := cmd.StdinPipe(); err != nil {
		cancel()
		f.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return cmd, stderr
}

// syncBuffer is a buffer read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newKey makes a key pair with ssh-keygen.
func newKey(t *testing.T, dir, name, typ string) (string, ssh.PublicKey) {
	t.Helper()
	path := filepath.Join(dir, name)
	args := []string{"-q", "-t", typ, "-N", "", "-C", name, "-f", path}
	if typ == "rsa" {
		args = append(args, "-b", "2048")
	}
	if out, err := exec.Command(openssh(t, "ssh-keygen"), args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sshd.ParseAuthorizedKey(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return path, pub
}

// eventually waits up to timeout for cond.
func eventually(t *testing.T, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(format, args...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readPID waits for a file holding a process id.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	eventually(t, 15*time.Second, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, "no process id in %s", path)
	return pid
}

// alive says whether a process runs (a zombie is dead, only not yet
// reaped by whoever inherited it).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}
