package agent

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/shoal-ml/shoal"
	"github.com/shoal-ml/shoal/agent/runas"
)

// prepareWorkDir sets the modes of the node's work dir. Everything the
// agent keeps there itself (its credential, results waiting to be
// reported, logs, host keys) is root's, 0600 in 0700 folders. When work
// runs as other accounts, they must be able to pass through the work dir
// (and the folders above it) to the folders handed to them, without
// listing it: the work dir and its attempts folder are 0711.
func prepareWorkDir(dir string, isolated bool) error {
	if !isolated {
		return os.Chmod(dir, 0o700)
	}
	if err := runas.CheckReachable(dir); err != nil {
		return fmt.Errorf("agent: work dir %s: %w", dir, err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "attempts"), filepath.Join(dir, "homes")} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return err
		}
	}
	return nil
}

// homeFor is the home of account acct on this node: its own folder
// (0700), kept between its jobs, so that caches (pip's, torch's) and dot
// files persist as they would in a user's home. Work that runs as the
// agent's own user keeps the agent's HOME.
func (a *Agent) homeFor(acct *runas.Account) (string, error) {
	if !acct.Switched() {
		return "", nil
	}
	home := filepath.Join(a.cfg.WorkDir, "homes", acct.Name)
	if err := acct.MkdirOwned(home); err != nil {
		return "", fmt.Errorf("home of %s: %w", acct.Name, err)
	}
	return home, nil
}

// runAsOf is the principal a rank runs for: its submitter, or (a task from
// a server that does not name one) a principal of the workspace's own.
func runAsOf(t *shoal.AgentTask) string {
	if t.RunAs != "" {
		return t.RunAs
	}
	return "workspace:" + t.Workspace
}

// accountEnv is HOME, USER and LOGNAME for processes run as acct; empty
// when they run as the agent's own user (they keep the agent's).
func (a *Agent) accountEnv(acct *runas.Account) (map[string]string, error) {
	home, err := a.homeFor(acct)
	if err != nil || home == "" {
		return nil, err
	}
	return map[string]string{"HOME": home, "USER": acct.Name, "LOGNAME": acct.Name}, nil
}

// mkdirMode creates dir if missing (a link there is refused) and sets its
// mode.
func mkdirMode(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return os.Chmod(dir, mode)
}

// sftpCommand is what the SSH servers of an agent start, as the login's
// account, for an SFTP session: this program's `agent sftp-server`.
func sftpCommand() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, "agent", "sftp-server"}
}
