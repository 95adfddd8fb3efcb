package runas

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Account names are short, safe for useradd, readable, and different for
// principals that share a readable part.
func TestNameFor(t *testing.T) {
	seen := map[string]string{}
	for _, p := range []string{"user:alice", "user:Alice", "sp:0f8fad5b-d9cb-469f-a165-70867728950e", "compute:default/cpu-cluster", "user:ÉVE;rm -rf /", ""} {
		n := NameFor(p)
		if len(n) > 31 || !strings.HasPrefix(n, Prefix) || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			t.Errorf("%q: name %q", p, n)
		}
		if other, ok := seen[n]; ok {
			t.Errorf("%q and %q share %q", p, other, n)
		}
		seen[n] = p
	}
	if n := NameFor("user:alice"); !strings.HasPrefix(n, "shoal-alice-") {
		t.Errorf("user:alice: %q", n)
	}
}

// Run as root, a principal's work runs as an account of its own: not
// root, without root's groups, unable to read a root file of mode 0600,
// able to use the folder handed to it; a second principal gets another
// account. Run as another user there is nobody else to be: every
// principal's work runs as that user, which Isolated and Describe say.
func TestAccounts(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		a, err := s.For("user:alice")
		if err != nil || s.Isolated() || a.Switched() || !strings.Contains(s.Describe(), "can read what") {
			t.Fatalf("not root: isolated %v, account %+v, %v, %q", s.Isolated(), a, err, s.Describe())
		}
		return
	}
	if !s.Isolated() || !strings.Contains(s.Describe(), "account of its own") {
		t.Fatalf("root: isolated %v, %q", s.Isolated(), s.Describe())
	}
	if _, err := s.For(""); err == nil {
		t.Error("an empty principal got an account")
	}
	alice, err := s.For("user:alice-runas-test")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := s.For("user:bob-runas-test")
	if err != nil {
		t.Fatal(err)
	}
	if alice.UID == 0 || alice.UID == bob.UID || !alice.Switched() {
		t.Fatalf("accounts %+v %+v", alice, bob)
	}
	if again, _ := s.For("user:alice-runas-test"); again.UID != alice.UID {
		t.Errorf("a second lookup gave %+v", again)
	}
	// An account of the right name that was not made for the principal
	// (another principal's, whose name was forced to match, or the
	// host's own) is not used.
	squatted := NameFor("user:squatted-runas-test")
	if _, _, err := lookup(squatted); err != nil {
		if err := useradd(squatted, "someone else"); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := s.For("user:squatted-runas-test"); err == nil || !strings.Contains(err.Error(), "was not made for it") {
		t.Errorf("a squatted account was used: %+v, %v", a, err)
	}

	dir, err := os.MkdirTemp("", "runas-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	if err := alice.OwnTree(work); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(secret); err != nil || fi.Sys() == nil {
		t.Fatal(err)
	}
	run := func(a *Account, script string) (string, error) {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = dir
		cmd.SysProcAttr = a.Apply(nil)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(alice, "cd "+work+"; id -u; id -G; touch sub/mine && echo WROTE; cat "+secret+" || echo REFUSED")
	if err != nil || strings.HasPrefix(out, "0\n") || strings.Contains(out, " 0 ") || !strings.Contains(out, "WROTE") || !strings.Contains(out, "REFUSED") || strings.Contains(out, "root's") {
		t.Errorf("alice's process: %v\n%s", err, out)
	}
	// OwnTree did not follow the link to the secret.
	if out, _ := run(bob, "cat "+secret+" || echo REFUSED"); !strings.Contains(out, "REFUSED") {
		t.Errorf("the secret became readable: %s", out)
	}
	// bob cannot enter alice's folder.
	if out, _ := run(bob, "ls "+work+" || echo REFUSED"); !strings.Contains(out, "REFUSED") {
		t.Errorf("bob listed alice's folder: %s", out)
	}

	// A folder of the agent's that alice passes through (a rank's): she
	// reaches her own folder in it, and nothing else of it; bob cannot
	// even stat a name in it.
	passage := filepath.Join(dir, "passage")
	if err := os.MkdirAll(filepath.Join(passage, "own"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(passage, 0o700); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(passage, "agents.log")
	if err := os.WriteFile(agents, []byte("the agent's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := alice.Own(filepath.Join(passage, "own")); err != nil {
		t.Fatal(err)
	}
	if err := alice.LetThrough(passage); err != nil {
		t.Fatal(err)
	}
	if out, err := run(alice, "ls "+passage+"/own && echo REACHED"); err != nil || !strings.Contains(out, "REACHED") {
		t.Errorf("alice did not reach her folder through the passage: %s (%v)", out, err)
	}
	for _, probe := range []string{"ls " + passage, "cat " + agents, "touch " + passage + "/planted"} {
		if out, _ := run(alice, probe+" || echo REFUSED"); !strings.Contains(out, "REFUSED") {
			t.Errorf("alice ran %q in the passage: %s", probe, out)
		}
	}
	for _, probe := range []string{"stat " + agents, "ls " + passage + "/own"} {
		if out, _ := run(bob, probe+" || echo REFUSED"); !strings.Contains(out, "REFUSED") {
			t.Errorf("bob ran %q in alice's passage: %s", probe, out)
		}
	}
	// Not switching, the agent's own user runs everything: the folder
	// keeps the mode such folders always had.
	self, err := Unisolated().For("user:alice-runas-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := self.LetThrough(passage); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(passage); err != nil || fi.Mode().Perm() != 0o711 {
		t.Errorf("unswitched, the passage is %v (%v), want 0711", fi.Mode().Perm(), err)
	}
}

// A folder whose parents others cannot enter is named with its mode.
func TestCheckReachable(t *testing.T) {
	dir := t.TempDir()
	closed := filepath.Join(dir, "closed")
	if err := os.MkdirAll(filepath.Join(closed, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	err := CheckReachable(filepath.Join(closed, "work"))
	if err == nil || !strings.Contains(err.Error(), closed) || !strings.Contains(err.Error(), "0700") {
		t.Errorf("closed parent: %v", err)
	}
	if err := os.Chmod(closed, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := CheckReachable(filepath.Join(closed, "work")); err != nil && strings.Contains(err.Error(), closed) {
		t.Errorf("open parent still refused: %v", err)
	}
}
