package sshd_test

import (
	"os"
	"strings"
	"testing"
)

func TestExecStatusStdoutStderr(t *testing.T) {
	f := newFixture(t)
	r := f.ssh("echo hi; echo oops >&2; exit 3")
	if r.code != 3 || r.out != "hi\n" || r.err != "oops\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 3, \"hi\\n\", \"oops\\n\"", r.code, r.out, r.err)
	}
	if r := f.ssh("true"); r.code != 0 {
		t.Fatalf("true: exit %d, %s", r.code, r.err)
	}
}

func TestExecEnvironmentAndHome(t *testing.T) {
	f := newFixture(t)
	// (bash gives itself TERM=dumb when there is none: ask printenv.)
	r := f.ssh(`pwd; echo "$HOME|$USER|$LOGNAME|$SHOAL_TEST_VAR|$(printenv TERM || echo unset)|$(printenv SSH_TTY || echo unset)"; echo "$SSH_CONNECTION"`)
	lines := strings.Split(r.out, "\n")
	if r.code != 0 || len(lines) < 3 {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if lines[0] != f.home {
		t.Errorf("working directory %q, want the home %q", lines[0], f.home)
	}
	if want := f.home + "|azureuser|azureuser|instance|unset|unset"; lines[1] != want {
		t.Errorf("environment %q, want %q", lines[1], want)
	}
	if fields := strings.Fields(lines[2]); len(fields) != 4 || fields[0] != "127.0.0.1" || fields[3] != f.port() {
		t.Errorf("SSH_CONNECTION %q", lines[2])
	}
}

func TestEnvRequests(t *testing.T) {
	f := newFixture(t)
	// The locale is accepted, as OpenSSH's stock AcceptEnv; PATH and
	// other variables are not.
	r := f.sshAs(f.key, "azureuser", []string{"-o", "SetEnv=LC_TEST=fr_FR.UTF-8 LANG=C.UTF-8 EVIL=1 PATH=/nowhere"},
		`echo "$LC_TEST|$LANG|${EVIL-unset}|$PATH"`)
	got := strings.Split(strings.TrimSpace(r.out), "|")
	if r.code != 0 || len(got) != 4 || got[0] != "fr_FR.UTF-8" || got[1] != "C.UTF-8" || got[2] != "unset" || got[3] == "/nowhere" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}

func TestStdinAndEOF(t *testing.T) {
	f := newFixture(t)
	args := append(f.opts(f.key), "-p", f.port(), "azureuser@127.0.0.1", "wc -c; echo done")
	r := f.run("hello\n", "ssh", args...)
	if r.code != 0 || strings.Fields(r.out)[0] != "6" || !strings.HasSuffix(r.out, "done\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}

func TestTerminalCommand(t *testing.T) {
	f := newFixture(t)
	t.Setenv("TERM", "xterm-256color") // the client sends its TERM in pty-req
	r := f.ssh("-tt", `tty; echo "term=$TERM tty=$SSH_TTY"; exit 4`)
	if r.code != 4 || !strings.Contains(r.out, "/dev/pts/") || !strings.Contains(r.out, "term=xterm-256color tty=/dev/pts/") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a /dev/pts terminal with TERM from the client", r.code, r.out, r.err)
	}
}

func TestInteractiveLoginShell(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(f.home+"/.profile", []byte("export FROM_PROFILE=yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append(f.opts(f.key), "-tt", "-p", f.port(), "azureuser@127.0.0.1")
	r := f.run("echo \"login=$0 profile=$FROM_PROFILE sum=$((40+2))\"; exit 5\n", "ssh", args...)
	if r.code != 5 || !strings.Contains(r.out, "sum=42") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	// A login shell (argv[0] with a dash) that read the home's profile.
	if !strings.Contains(r.out, "login=-") || !strings.Contains(r.out, "profile=yes") {
		t.Fatalf("not a login shell reading ~/.profile: %q", r.out)
	}
}

func TestKeepaliveAnswered(t *testing.T) {
	f := newFixture(t)
	// The client gives up after one unanswered keepalive a second.
	r := f.sshAs(f.key, "azureuser", []string{"-o", "ServerAliveInterval=1", "-o", "ServerAliveCountMax=1"}, "sleep 3; echo alive")
	if r.code != 0 || r.out != "alive\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}
