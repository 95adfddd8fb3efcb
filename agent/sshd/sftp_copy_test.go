package sshd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/agent/sshd"
	"github.com/shoal-ml/shoal/internal/testenv"
)

// A host without OpenSSH's sftp-server, and an agent whose executable its
// accounts cannot run (`go run` as root builds it in a 0700 folder; go
// test's binary, which stands for it here, is in one too): the agent
// puts a copy of itself in <run dir>/bin, root's and 0755 in a 0755
// folder of root's, and serves sftp and scp with it as the login's
// account. A copy someone changed is put right on the next start.
func TestSFTPWithTheAgentsCopy(t *testing.T) {
	testenv.Root(t, "runs logins as accounts of their own, as an agent as root does")
	openssh(t, "sftp")
	dir, err := os.MkdirTemp("", "sshd-sftp-copy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "run")
	if err := runas.MkdirReachable(runDir); err != nil {
		t.Fatal(err)
	}
	accounts, err := runas.New()
	if err != nil {
		t.Fatal(err)
	}
	acct, err := accounts.For("user:sshd-sftp-copy-test")
	if err != nil {
		t.Fatal(err)
	}
	// No sftp-server where the agent looks.
	t.Setenv(files.SFTPServerPathsEnv, filepath.Join(dir, "no-such", "sftp-server"))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if runas.CheckReachable(exe) == nil {
		t.Fatalf("the test binary %s is open to other accounts; this test needs it closed, as `go test` builds it (in a 0700 work folder)", exe)
	}

	cmd, why := files.SFTPCommand(runDir)
	copyPath := filepath.Join(runDir, "bin", files.SFTPCopyName)
	if len(cmd) == 0 || cmd[0] != copyPath {
		t.Fatalf("SFTP command %q (%s), want the agent's copy %s", cmd, why, copyPath)
	}
	mustBeRoots(t, filepath.Join(runDir, "bin"), 0o755|os.ModeDir)
	mustBeRoots(t, copyPath, 0o755)
	self, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(copyPath); !bytes.Equal(b, self) {
		t.Fatal("the copy is not the agent's executable")
	}

	f := newFixtureWith(t, dir, nil, func(cfg *sshd.Config) {
		cfg.Credential = acct.Apply(nil).Credential
		cfg.SFTPCommand = cmd
	})
	if err := acct.Own(f.home); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "data.bin")
	data := writeRandom(t, local, 100_000)
	if err := os.Chmod(local, 0o644); err != nil {
		t.Fatal(err)
	}
	batch := filepath.Join(dir, "batch")
	got := filepath.Join(dir, "got.bin")
	if err := os.WriteFile(batch, []byte("put "+local+" up.bin\nget up.bin "+got+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := f.run("", "sftp", append(f.opts(f.key), "-P", f.port(), "-b", batch, "azureuser@127.0.0.1")...)
	if r.code != 0 {
		t.Fatalf("sftp with the agent's copy: exit %d, stdout %s, stderr %s", r.code, r.out, r.err)
	}
	mustEqualFile(t, got, data)
	up := filepath.Join(f.home, "up.bin")
	mustEqualFile(t, up, data)
	if fi, err := os.Stat(up); err != nil || fi.Sys().(*syscall.Stat_t).Uid != acct.UID {
		t.Errorf("the uploaded file is not the login's account's (uid %d): %v", acct.UID, err)
	}
	r = f.run("", "scp", append(f.opts(f.key), "-P", f.port(), local, "azureuser@127.0.0.1:scp.bin")...)
	if r.code != 0 {
		t.Fatalf("scp with the agent's copy: exit %d, stderr %s", r.code, r.err)
	}
	mustEqualFile(t, filepath.Join(f.home, "scp.bin"), data)

	// A changed copy (root's own doing: no account may write there) is
	// replaced by the next start's.
	if err := os.WriteFile(copyPath, []byte("#!/bin/sh\nexit 0\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	if cmd, why := files.SFTPCommand(runDir); len(cmd) == 0 || cmd[0] != copyPath {
		t.Fatalf("after a change: %q (%s)", cmd, why)
	}
	mustBeRoots(t, copyPath, 0o755)
	if b, _ := os.ReadFile(copyPath); !bytes.Equal(b, self) {
		t.Fatal("a changed copy was kept")
	}

	// A bin folder another account owns could have its copy swapped: no
	// copy is kept there, and the reason says so.
	other := filepath.Join(dir, "other")
	if err := runas.MkdirReachable(other); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(other, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := acct.Own(filepath.Join(other, "bin")); err != nil {
		t.Fatal(err)
	}
	if cmd, why := files.SFTPCommand(other); len(cmd) != 0 || !strings.Contains(why, "not a folder of root's") {
		t.Fatalf("a bin folder of another account's: %q, reason %q", cmd, why)
	}
}

// Without any SFTP program the login's account may run, sftp and scp are
// told why on their stderr, not a bare "subsystem request failed".
func TestSFTPRefusalSaysWhy(t *testing.T) {
	dir, err := os.MkdirTemp("", "sshd-sftp-why-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	const why = "this host has no OpenSSH sftp-server (looked at /nowhere)"
	f := newFixtureWith(t, dir, nil, func(cfg *sshd.Config) {
		cfg.Credential = &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid()), Groups: []uint32{}}
		cfg.SFTPUnavailable = why
	})
	batch := filepath.Join(dir, "batch")
	if err := os.WriteFile(batch, []byte("ls\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := f.run("", "sftp", append(f.opts(f.key), "-P", f.port(), "-b", batch, "azureuser@127.0.0.1")...)
	if r.code == 0 || !strings.Contains(r.err, why) {
		t.Fatalf("sftp without a server: exit %d, stderr %q; want the reason %q", r.code, r.err, why)
	}
	r = f.run("", "scp", append(f.opts(f.key), "-P", f.port(), batch, "azureuser@127.0.0.1:x")...)
	if r.code == 0 || !strings.Contains(r.err, why) {
		t.Fatalf("scp without a server: exit %d, stderr %q; want the reason %q", r.code, r.err, why)
	}
}

// mustBeRoots fails unless path is root's with exactly mode.
func mustBeRoots(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode() != mode {
		t.Errorf("%s: uid %d mode %v, want root's %v", path, st.Uid, fi.Mode(), mode)
	}
}
