package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// A cluster node's SSH server that fails to start (here: its host key
// path is a directory) is tried again on later syncs with the settings the
// server sent once, and serves once the cause is gone.
func TestNodeSSHRetriesAFailedStart(t *testing.T) {
	dir := t.TempDir()
	a := &Agent{cfg: Config{WorkDir: dir, Address: "127.0.0.1", NodeID: "n1", ServerURL: "http://127.0.0.1:1", Clock: core.SystemClock{}},
		log: slog.New(slog.DiscardHandler)}
	blocker := filepath.Join(dir, nodeHostKeyFile)
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	a.serveNodeSSH(&node.NodeSSH{AdminUsername: "ops"})
	if a.sshPort() != 0 || a.retrySSH() == nil {
		t.Fatalf("a failed start: port %d, retry %v; want no server and the settings kept", a.sshPort(), a.retrySSH())
	}
	os.RemoveAll(blocker)
	a.serveNodeSSH(a.retrySSH())
	defer a.closeNodeSSH()
	if a.sshPort() == 0 || a.retrySSH() != nil {
		t.Fatalf("the retry: port %d, retry %v; want a server", a.sshPort(), a.retrySSH())
	}
}
