package sshd_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/agent/sshd"
)

// A server whose logins run as an account of their own (an instance's
// user, a cluster's admin) starts their shells as that account, not as
// itself: no root, no root file, no Unix socket the server would connect
// to as itself, no SFTP inside the server. A server that is not root
// cannot switch accounts: a login set to run as another one is refused
// its shell with the reason, never run as the server's user.
func TestLoginsRunAsTheirAccount(t *testing.T) {
	dir, err := os.MkdirTemp("", "sshd-runas-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("the server's"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	cred := &syscall.Credential{Uid: 4242, Gid: 4242, Groups: []uint32{}}
	var acct *runas.Account
	if os.Geteuid() == 0 {
		accounts, err := runas.New()
		if err != nil {
			t.Fatal(err)
		}
		if acct, err = accounts.For("user:sshd-runas-test"); err != nil {
			t.Fatal(err)
		}
		cred = acct.Apply(nil).Credential
	}
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := acct.Own(home); err != nil {
		t.Fatal(err)
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sshd.Start(sshd.Config{
		Listen: "127.0.0.1:0", HostKeyPath: filepath.Join(dir, "hostkey"), HomeDir: home, Credential: cred,
		AuthorizedKeys: func() []ssh.PublicKey { return []ssh.PublicKey{signer.PublicKey()} },
		Env:            func() []string { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client, err := ssh.Dial("tcp", srv.Addr().String(), &ssh.ClientConfig{User: "azureuser", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	run := func(cmd string) (string, error) {
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		out, err := sess.CombinedOutput(cmd)
		return string(out), err
	}

	if os.Geteuid() != 0 {
		out, err := run("id -u")
		if err == nil || !strings.Contains(out, "not permitted") {
			t.Fatalf("a login set to run as uid 4242 ran on a server that cannot switch: %v %q", err, out)
		}
		return
	}
	// cat's complaint goes nowhere: stderr is a stream of its own over
	// SSH, and under load it overtook stdout's first line.
	out, err := run("id -u; pwd; cat " + secret + " 2>/dev/null || echo REFUSED")
	if err != nil || strings.HasPrefix(out, "0\n") || !strings.Contains(out, home) || !strings.Contains(out, "REFUSED") || strings.Contains(out, "the server's") {
		t.Fatalf("the login's shell: %v\n%s", err, out)
	}
	if want := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]); want != strings.TrimSpace(itoa(acct.UID)) {
		t.Errorf("uid %q, want the account's %d", want, acct.UID)
	}
	if _, err := client.Dial("unix", "/run/does-not-matter.sock"); err == nil || !strings.Contains(err.Error(), "Unix sockets") {
		t.Errorf("a Unix socket forward: %v", err)
	}
	// A privileged port is the server's (root's) to bind, not the login's.
	if _, err := client.Listen("tcp", "127.0.0.1:999"); err == nil {
		t.Error("a remote forward took privileged port 999")
	}
	// No SFTP command configured: SFTP is refused, saying why, rather
	// than served by the server itself.
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	stderr, err := sess.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestSubsystem("sftp"); err != nil {
		t.Fatalf("the sftp request was not answered with a reason: %v", err)
	}
	// The session ends at once, with the reason on its stderr.
	if why, _ := io.ReadAll(stderr); !strings.Contains(string(why), "no SFTP server can run as this login's account") {
		t.Errorf("SFTP without a command: stderr %q; want the reason", why)
	}
}

func itoa(n uint32) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}
