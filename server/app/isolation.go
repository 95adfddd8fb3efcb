package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/shoal-ml/shoal/agent/runas"
)

// secureDataDir makes the data dir the server's alone: the dir 0700, the
// files directly in it and in tls/ 0600, and the process's umask 077 so
// that everything the server writes later (the database and its journal,
// files, keys, backups) is created that way. Work never runs below it:
// the local provider's nodes live in the nodes dir.
func secureDataDir(dir string) error {
	syscall.Umask(0o077)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "tls")} {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			mode := fs.FileMode(0o600)
			if e.IsDir() {
				mode = 0o700
			} else if !e.Type().IsRegular() {
				continue
			}
			if err := os.Chmod(filepath.Join(d, e.Name()), mode); err != nil {
				return fmt.Errorf("data dir: %w", err)
			}
		}
	}
	return nil
}

// runsAsRoot reports whether this server (and so the agents of its local
// provider) runs as root, which is what lets work run as accounts of its
// own.
func runsAsRoot() bool { return os.Geteuid() == 0 }

// nodesDir resolves where the local provider's nodes keep their work
// dirs: the configured dir, else <dataDir>/nodes for a server that is not
// root (its work runs as its own user anyway), else a folder outside the
// data dir, under /var/lib, whose parents the work's accounts can enter.
// As root the dir must be enterable by those accounts (checked here, with
// the reason when it is not) and is made 0711: they pass through it to
// their own folders without listing it.
func nodesDir(dataDir, configured string) (string, error) {
	dir := configured
	if dir == "" {
		if !runsAsRoot() {
			return filepath.Join(dataDir, "nodes"), nil
		}
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256([]byte(abs))
		dir = filepath.Join("/var/lib/shoal-nodes", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:4]))
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if !runsAsRoot() {
		return dir, nil
	}
	if err := runas.MkdirReachable(dir); err != nil {
		return "", fmt.Errorf("nodes_dir: %w", err)
	}
	if err := runas.CheckReachable(dir); err != nil {
		return "", fmt.Errorf("nodes_dir %s: %w", dir, err)
	}
	return dir, nil
}

// LocalIsolation says as whom the local provider's work runs: accounts of
// their own per user when the server runs as root, else the server's own
// user, with what that means for sharing the server.
func LocalIsolation() string {
	accounts, _ := runas.New()
	return accounts.Describe()
}
