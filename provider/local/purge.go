package local

import (
	"context"
	"os"

	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

var _ nodekind.Purger = (*Provider)(nil)

// Purge removes a released node's work dir: for a compute instance, its
// home. It refuses while an agent still runs there.
func (p *Provider) Purge(ctx context.Context, nd *nodekind.Node) error {
	if err := checkNodeID(nd.ID); err != nil {
		return err
	}
	dir := p.nodeDir(nd.ID)
	if pid, err := readPID(dir); err == nil && isAgent(pid, nd.ID) {
		return core.Errorf(core.ECONFLICT, "an agent still runs in node %s's work dir (pid %d)", nd.ID, pid)
	}
	killNodeProcesses(nd.ID, p.nodeDir(nd.ID))
	return os.RemoveAll(dir)
}
