package sshd_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
)

// These tests drive the server with the real OpenSSH client.
func openssh(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: the SSH tests need the OpenSSH client (apt-get install openssh-client)", name)
	}
	return p
}

type fixture struct {
	t       *testing.T
	dir     string
	home    string
	key     string // private key path
	pub     ssh.PublicKey
	srv     *sshd.Server
	known   string
	hostKey string
	mu      sync.Mutex
	keys    []ssh.PublicKey
}

func newKey(t *testing.T, dir, name, typ string) (string, ssh.PublicKey) {
	t.Helper()
	path := filepath.Join(dir, name)
	args := []string{"-q", "-t", typ, "-N", "", "-f", path}
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

func start(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{t: t, dir: dir, home: filepath.Join(dir, "home"), hostKey: filepath.Join(dir, "host_key"), known: filepath.Join(dir, "known_hosts")}
	if err := os.MkdirAll(f.home, 0o700); err != nil {
		t.Fatal(err)
	}
	f.key, f.pub = newKey(t, dir, "id_ed25519", "ed25519")
	f.keys = []ssh.PublicKey{f.pub}
	f.boot()
	t.Cleanup(func() { f.srv.Close() })
	return f
}

func (f *fixture) boot() {
	f.t.Helper()
	srv, err := sshd.Start(sshd.Config{
		HostKeyPath: f.hostKey, HomeDir: f.home,
		AuthorizedKeys: func() []ssh.PublicKey { f.mu.Lock(); defer f.mu.Unlock(); return f.keys },
		Env:            func() []string { return []string{"SHOAL_TEST_VAR=instance"} },
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.srv = srv
	hk, err := os.ReadFile(f.hostKey)
	if err != nil {
		f.t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(hk)
	if err != nil {
		f.t.Fatal(err)
	}
	line := fmt.Sprintf("[127.0.0.1]:%d %s", srv.Addr().Port, ssh.MarshalAuthorizedKey(signer.PublicKey()))
	if err := os.WriteFile(f.known, []byte(line), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) opts(key string) []string {
	return []string{"-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + f.known, "-o", "ConnectTimeout=10", "-i", key}
}

// ssh runs the OpenSSH client; it returns stdout, stderr and the exit code.
func (f *fixture) ssh(key, user string, args ...string) (string, string, int) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all := append(f.opts(key), "-p", strconv.Itoa(f.srv.Addr().Port), user+"@127.0.0.1")
	cmd := exec.CommandContext(ctx, openssh(f.t, "ssh"), append(all, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestExecStatusStdoutStderr(t *testing.T) {
	f := start(t)
	out, errOut, code := f.ssh(f.key, "azureuser", "echo hi; echo oops >&2; pwd; echo $SHOAL_TEST_VAR; exit 3")
	if code != 3 || out != "hi\n"+f.home+"\ninstance\n" || !strings.Contains(errOut, "oops") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestPTYShell(t *testing.T) {
	f := start(t)
	out, errOut, code := f.ssh(f.key, "azureuser", "-tt", "tty; echo term=$TERM")
	if code != 0 || !strings.Contains(out, "/dev/pts/") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a pty", code, out, errOut)
	}
}

func TestWrongKeyAndUserRefused(t *testing.T) {
	f := start(t)
	other, _ := newKey(t, f.dir, "other", "ed25519")
	if _, errOut, code := f.ssh(other, "azureuser", "true"); code != 255 || !strings.Contains(errOut, "Permission denied") {
		t.Fatalf("another key: exit %d, %s", code, errOut)
	}
	if _, errOut, code := f.ssh(f.key, "root", "true"); code != 255 || !strings.Contains(errOut, "Permission denied") {
		t.Fatalf("another user: exit %d, %s", code, errOut)
	}
	// A key set after start works at the next login.
	f.mu.Lock()
	f.keys = nil
	f.mu.Unlock()
	if _, _, code := f.ssh(f.key, "azureuser", "true"); code != 255 {
		t.Fatalf("a removed key still logs in (exit %d)", code)
	}
	f.mu.Lock()
	f.keys = []ssh.PublicKey{f.pub}
	f.mu.Unlock()
	if _, errOut, code := f.ssh(f.key, "azureuser", "true"); code != 0 {
		t.Fatalf("the key set again: exit %d, %s", code, errOut)
	}
}

func TestSCPAndSFTP(t *testing.T) {
	f := start(t)
	local := filepath.Join(f.dir, "data.txt")
	if err := os.WriteFile(local, []byte("payload\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(f.srv.Addr().Port)
	run := func(name string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, openssh(t, name), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("scp", append(f.opts(f.key), "-P", port, local, "azureuser@127.0.0.1:~/up.txt")...)
	if b, err := os.ReadFile(filepath.Join(f.home, "up.txt")); err != nil || string(b) != "payload\n" {
		t.Fatalf("scp upload: %q %v", b, err)
	}
	down := filepath.Join(f.dir, "down.txt")
	run("scp", append(f.opts(f.key), "-P", port, "azureuser@127.0.0.1:up.txt", down)...)
	if b, err := os.ReadFile(down); err != nil || string(b) != "payload\n" {
		t.Fatalf("scp download: %q %v", b, err)
	}
	batch := filepath.Join(f.dir, "batch")
	os.WriteFile(batch, []byte("mkdir sub\nput "+local+" sub/s.txt\nls sub\n"), 0o600)
	run("sftp", append(f.opts(f.key), "-P", port, "-b", batch, "azureuser@127.0.0.1")...)
	if b, err := os.ReadFile(filepath.Join(f.home, "sub", "s.txt")); err != nil || string(b) != "payload\n" {
		t.Fatalf("sftp put: %q %v", b, err)
	}
}

func TestLocalPortForward(t *testing.T) {
	f := start(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "through the tunnel") }))
	defer web.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	lport := l.Addr().(*net.TCPAddr).Port
	l.Close()
	target := strings.TrimPrefix(web.URL, "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(f.opts(f.key), "-N", "-o", "ExitOnForwardFailure=yes", "-L", fmt.Sprintf("%d:%s", lport, target), "-p", strconv.Itoa(f.srv.Addr().Port), "azureuser@127.0.0.1")
	cmd := exec.CommandContext(ctx, openssh(t, "ssh"), args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", lport))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "through the tunnel" {
				t.Fatalf("forwarded answer %q", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the forwarded port never answered: %v; ssh: %s", err, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := f.srv.ActiveSessions(); n != 1 {
		t.Fatalf("ActiveSessions = %d with a tunnel open, want 1", n)
	}
}

func TestSessionsCountAndCloseKills(t *testing.T) {
	f := start(t)
	if n := f.srv.ActiveSessions(); n != 0 {
		t.Fatalf("ActiveSessions = %d at start", n)
	}
	marker := filepath.Join(f.dir, "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append(f.opts(f.key), "-p", strconv.Itoa(f.srv.Addr().Port), "azureuser@127.0.0.1", "echo $$ > "+marker+"; exec sleep 1000")
	cmd := exec.CommandContext(ctx, openssh(t, "ssh"), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var pid int
	deadline := time.Now().Add(15 * time.Second)
	for pid == 0 {
		if b, err := os.ReadFile(marker); err == nil && len(bytes.TrimSpace(b)) > 0 {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the session's command never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := f.srv.ActiveSessions(); n != 1 {
		t.Fatalf("ActiveSessions = %d with one session open", n)
	}
	before := f.srv.LastActivity()
	f.srv.Close()
	for deadline = time.Now().Add(5 * time.Second); ; {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) || zombie(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d of the session survived Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if f.srv.LastActivity().Before(before) {
		t.Fatal("LastActivity went back")
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

func TestHostKeyStableAcrossRestarts(t *testing.T) {
	f := start(t)
	fp := f.srv.HostKeyFingerprint()
	known, _ := os.ReadFile(f.known)
	f.srv.Close()
	f.boot()
	if got := f.srv.HostKeyFingerprint(); got != fp {
		t.Fatalf("host key changed across restarts: %s then %s", fp, got)
	}
	// The old known_hosts entry (for the new port) still matches.
	again, _ := os.ReadFile(f.known)
	if !bytes.Equal(known[bytes.IndexByte(known, ' '):], again[bytes.IndexByte(again, ' '):]) {
		t.Fatal("the host key line changed")
	}
	if _, errOut, code := f.ssh(f.key, "azureuser", "true"); code != 0 {
		t.Fatalf("login after restart: %d %s", code, errOut)
	}
}

func TestParseKeyForms(t *testing.T) {
	dir := t.TempDir()
	rsa, want := newKey(t, dir, "id_rsa", "rsa")
	for _, form := range []string{"PEM", "PKCS8", "RFC4716"} {
		out, err := exec.Command(openssh(t, "ssh-keygen"), "-e", "-m", form, "-f", rsa+".pub").Output()
		if err != nil {
			t.Fatalf("ssh-keygen -e -m %s: %v", form, err)
		}
		got, err := sshd.ParseAuthorizedKey(string(out))
		if err != nil {
			t.Fatalf("%s form: %v\n%s", form, err, out)
		}
		if !bytes.Equal(got.Marshal(), want.Marshal()) {
			t.Fatalf("%s form parsed to another key", form)
		}
	}
	for _, bad := range []string{"", "ssh-rsa notbase64", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"} {
		if _, err := sshd.ParseAuthorizedKey(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
