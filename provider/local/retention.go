package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// DefaultNodeDirRetention is how long a released cluster node's work dir
// (its agent.log, its jobs' leftovers) stays for a look before it is
// removed, when the config says nothing.
const DefaultNodeDirRetention = time.Hour

// releasedMark is the file a released cluster node's work dir gets:
// the unix time of its release.
const releasedMark = ".released"

// markReleased notes that the work dir of cluster node nd was released
// now, then removes the released dirs whose retention has passed (this
// one at once when the retention is 0). A compute instance's work dir is
// its home: it is never marked, and goes only with the instance (Purge).
func (p *Provider) markReleased(nd *nodekind.Node, now time.Time) {
	if nd.Role == nodekind.NodeRoleInstance || checkNodeID(nd.ID) != nil {
		return
	}
	dir := p.nodeDir(nd.ID)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, releasedMark), []byte(strconv.FormatInt(now.Unix(), 10)), 0o600)
	p.sweepReleased(now)
}

// sweepReleased removes the work dirs of released cluster nodes older
// than the retention whose agent is gone; it runs at each release and
// when the provider starts (dirs a stopped server left).
func (p *Provider) sweepReleased(now time.Time) {
	if p.cfg.NodesDir == "" {
		return
	}
	entries, err := os.ReadDir(p.cfg.NodesDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(p.cfg.NodesDir, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, releasedMark))
		if err != nil {
			continue
		}
		at, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || now.Sub(time.Unix(at, 0)) < p.cfg.NodeDirRetention {
			continue
		}
		if pid, err := readPID(dir); err == nil && isAgent(pid, e.Name()) {
			continue // a node of that name runs again there
		}
		if err := os.RemoveAll(dir); err != nil {
			p.log.Warn("removing a released node's folder failed", "dir", dir, "err", err)
		}
	}
}
