package sshd_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/agent/sshd"
)

func TestHostKeyFileAndFingerprint(t *testing.T) {
	f := newFixture(t)
	st, err := os.Stat(f.hostKey)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("host key mode %v, want 0600", st.Mode().Perm())
	}
	// The fingerprint is the one ssh-keygen prints for the key file.
	out, err := exec.Command(openssh(t, "ssh-keygen"), "-l", "-f", f.hostKey).Output()
	if err != nil {
		t.Fatalf("ssh-keygen -l: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 || fields[1] != f.srv.HostKeyFingerprint() || !strings.Contains(string(out), "(ED25519)") {
		t.Fatalf("ssh-keygen -l says %q, the server %q", out, f.srv.HostKeyFingerprint())
	}
}

// TestHostKeyStableAcrossRestarts: stop and start keep the host key, so
// the client's known_hosts entry from before still verifies the server
// with StrictHostKeyChecking=yes.
func TestHostKeyStableAcrossRestarts(t *testing.T) {
	f := newFixture(t)
	fp, addr := f.srv.HostKeyFingerprint(), f.srv.Addr().String()
	known, err := os.ReadFile(f.known)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Close(); err != nil {
		t.Fatal(err)
	}
	f.start(addr) // the same port, as the agent does when it is free
	if got := f.srv.HostKeyFingerprint(); got != fp {
		t.Fatalf("host key changed across restarts: %s then %s", fp, got)
	}
	if err := os.WriteFile(f.known, known, 0o600); err != nil { // the entry written before the restart
		t.Fatal(err)
	}
	if r := f.ssh("echo again"); r.code != 0 || r.out != "again\n" {
		t.Fatalf("login after restart: exit %d, %q %s", r.code, r.out, r.err)
	}
}

func TestUnreadableHostKeyNotReplaced(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/key"
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if srv, err := sshd.Start(sshd.Config{HostKeyPath: path, HomeDir: dir}); err == nil {
		srv.Close()
		t.Fatal("a server started with an unreadable host key")
	}
	if b, _ := os.ReadFile(path); string(b) != "not a key" {
		t.Fatal("the unreadable host key was replaced")
	}
	if _, err := sshd.Start(sshd.Config{HomeDir: dir}); err == nil {
		t.Fatal("a server started without a host key path")
	}
	if _, err := sshd.Start(sshd.Config{HostKeyPath: dir + "/k2", HomeDir: dir + "/missing"}); err == nil {
		t.Fatal("a server started with a missing home")
	}
}
