package files

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/shoal-ml/shoal/agent/runas"
)

// SFTPServerPathsEnv overrides where the agent looks for OpenSSH's
// sftp-server: a list of paths separated by ':' (empty: none, so that
// the agent serves SFTP with its own copy). A host whose sftp-server lives
// elsewhere sets it; the tests set it to a folder without one.
const SFTPServerPathsEnv = "SHOAL_SFTP_SERVER_PATHS"

// sftpServerPaths are where Debian, Fedora, Arch and Alpine put OpenSSH's
// sftp-server.
var sftpServerPaths = []string{"/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/lib/ssh/sftp-server", "/usr/libexec/sftp-server"}

// SFTPCopyName is the agent's copy of itself in <run dir>/bin that
// serves SFTP as the login's account when the host has no sftp-server and
// the agent's own executable is closed to that account (`go run` builds
// it in a 0700 folder; an operator may keep it under /root).
const SFTPCopyName = "shoal-sftp"

// SFTPCommand is what the SSH servers of an agent start, as the login's
// account, for an SFTP session: OpenSSH's sftp-server where the host has
// one, else this program's `agent sftp-server` when that account can run
// it, else the same from a copy of this program in <runDir>/bin (root's,
// 0755, in a folder no account may write, so that no login can replace
// what another login runs). Nil and the reason when none can be had:
// the session then tells the client why.
func SFTPCommand(runDir string) ([]string, string) {
	paths := sftpServerPaths
	if v, ok := os.LookupEnv(SFTPServerPathsEnv); ok {
		paths = filepath.SplitList(v)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o001 != 0 {
			return []string{p}, ""
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Sprintf("this host has no OpenSSH sftp-server (looked at %s) and the agent cannot find its own executable: %v", strings.Join(paths, ", "), err)
	}
	if fi, err := os.Stat(exe); err == nil && fi.Mode().Perm()&0o001 != 0 && runas.CheckReachable(exe) == nil {
		return []string{exe, "agent", "sftp-server"}, ""
	}
	copyPath, err := sftpCopy(exe, runDir)
	if err != nil {
		return nil, fmt.Sprintf("this host has no OpenSSH sftp-server (looked at %s; install openssh-sftp-server) and the agent's %s is closed to the login's account; its copy for SFTP failed: %v", strings.Join(paths, ", "), exe, err)
	}
	return []string{copyPath, "agent", "sftp-server"}, ""
}

// copyMu keeps two SSH servers of one agent from writing the copy at
// once.
var copyMu sync.Mutex

// sftpCopy puts a copy of exe at <runDir>/bin/shoal-sftp for the accounts
// to run: the folder root's and 0755, the file root's and 0755, its
// content exe's (checked, and replaced when it differs). Only root makes
// it: another agent's logins run as itself and need none.
func sftpCopy(exe, runDir string) (string, error) {
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("only an agent running as root keeps a copy for its accounts")
	}
	if runDir == "" {
		return "", fmt.Errorf("no run dir to keep it in")
	}
	if err := runas.CheckReachable(filepath.Join(runDir, "bin")); err != nil {
		return "", err
	}
	dir := filepath.Join(runDir, "bin")
	dst := filepath.Join(dir, SFTPCopyName)
	want, err := digest(exe)
	if err != nil {
		return "", err
	}
	copyMu.Lock()
	defer copyMu.Unlock()
	if err := rootDir(dir); err != nil {
		return "", err
	}
	// Checked on every start: a copy that is not exactly this program,
	// root's and 0755, is replaced.
	if !sameRootFile(dst, want) {
		src, err := os.Open(exe)
		if err != nil {
			return "", err
		}
		defer src.Close()
		tmp, err := os.CreateTemp(dir, "."+SFTPCopyName+"-*")
		if err != nil {
			return "", err
		}
		h := sha256.New()
		_, werr := io.Copy(io.MultiWriter(tmp, h), src)
		if werr == nil && !bytes.Equal(h.Sum(nil), want) {
			werr = fmt.Errorf("%s changed while it was copied", exe)
		}
		if werr == nil {
			werr = tmp.Chmod(0o755)
		}
		if werr == nil {
			werr = tmp.Sync()
		}
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), dst)
		}
		if werr != nil {
			_ = os.Remove(tmp.Name())
			return "", fmt.Errorf("copy to %s: %w", dst, werr)
		}
	}
	return dst, nil
}

// rootDir makes dir a folder of root's that the accounts may enter and
// list but not write (0755); a link or another owner's folder there is
// refused, since whoever owns it could swap the copy.
func rootDir(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || st.Uid != 0 {
		return fmt.Errorf("%s is not a folder of root's: refusing to keep a program others run there", dir)
	}
	if fi.Mode().Perm() != 0o755 {
		return os.Chmod(dir, 0o755)
	}
	return nil
}

// sameRootFile reports whether path is a regular file of root's, 0755,
// whose SHA-256 is want.
func sameRootFile(path string, want []byte) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || st.Uid != 0 || fi.Mode().Perm() != 0o755 {
		return false
	}
	got, err := digest(path)
	return err == nil && bytes.Equal(got, want)
}

// digest is the SHA-256 of a file's content, read as a stream (the
// agent's executable is tens of megabytes).
func digest(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
