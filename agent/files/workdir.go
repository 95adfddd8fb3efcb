package files

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/domain/node"
)

// RunRoot is where an agent running as root keeps the folders of work
// that runs as other accounts when its own work dir cannot hold them (its
// parents are closed to those accounts, as root's home is): one folder
// per node, named after the node and its work dir.
const RunRoot = "/var/lib/shoal-work"

// PrepareWorkDir sets the modes of the node's work dir and returns the run
// dir: where the folders of the node's work (attempts, homes, the CA
// bundle) live. Everything the agent keeps for itself (its credential,
// results waiting to be reported, logs, host keys) is root's, 0600 in
// 0700 folders. When work runs as other accounts, they must pass through
// the run dir (and the folders above it) to the folders handed to them,
// without listing it: it and its attempts and homes folders are 0711. The
// run dir is the work dir when the accounts can reach it, else a folder
// of its own under RunRoot.
func PrepareWorkDir(dir, nodeID string, isolated bool) (string, error) {
	if !isolated {
		return dir, os.Chmod(dir, 0o700)
	}
	run := dir
	if runas.CheckReachable(dir) != nil {
		sum := sha256.Sum256([]byte(dir))
		name := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
				return r
			}
			return '_'
		}, nodeID)
		run = filepath.Join(RunRoot, strings.TrimLeft(name, ".")+"-"+hex.EncodeToString(sum[:4]))
	}
	for _, d := range []string{run, filepath.Join(run, "attempts"), filepath.Join(run, "homes")} {
		if err := runas.MkdirReachable(d); err != nil {
			return "", fmt.Errorf("agent: run dir: %w", err)
		}
	}
	if err := runas.CheckReachable(filepath.Join(run, "attempts")); err != nil {
		return "", fmt.Errorf("agent: run dir %s: %w", run, err)
	}
	return run, nil
}

// HomeFor is the home of account acct on the node whose run dir is runDir: its own folder
// (0700), kept between its jobs, so that caches (pip's, torch's) and dot
// files persist as they would in a user's home. Work that runs as the
// agent's own user keeps the agent's HOME.
func HomeFor(runDir string, acct *runas.Account) (string, error) {
	if !acct.Switched() {
		return "", nil
	}
	home := filepath.Join(runDir, "homes", acct.Name)
	if err := acct.MkdirOwned(home); err != nil {
		return "", fmt.Errorf("home of %s: %w", acct.Name, err)
	}
	return home, nil
}

// RunAsOf is the principal a rank runs for: its submitter, or (a task from
// a server that does not name one) a principal of the workspace's own.
func RunAsOf(t *node.AgentTask) string {
	if t.RunAs != "" {
		return t.RunAs
	}
	return "workspace:" + t.Workspace
}

// AccountEnv is HOME, USER and LOGNAME for processes run as acct; empty
// when they run as the agent's own user (they keep the agent's).
func AccountEnv(runDir string, acct *runas.Account) (map[string]string, error) {
	home, err := HomeFor(runDir, acct)
	if err != nil || home == "" {
		return nil, err
	}
	return map[string]string{"HOME": home, "USER": acct.Name, "LOGNAME": acct.Name}, nil
}

// MkdirMode creates dir if missing (a link there is refused) and sets its
// mode.
func MkdirMode(dir string, mode os.FileMode) error {
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

// Exists reports whether a path exists (a device node, for the GPUs a
// container is given).
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ReadPort reads a port an earlier run wrote to path (an SSH server's,
// so that its port stays the same across restarts); 0 when none.
func ReadPort(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}
