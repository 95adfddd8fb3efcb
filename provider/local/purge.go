package local

import (
	"context"
	"os"

	"github.com/shoal-ml/shoal"
)

var _ shoal.Purger = (*Provider)(nil)

// Purge removes a released node's work dir: for a compute instance, its
// home. It refuses while an agent still runs there.
func (p *Provider) Purge(ctx context.Context, nd *shoal.Node) error {
	if err := checkNodeID(nd.ID); err != nil {
		return err
	}
	dir := p.nodeDir(nd.ID)
	if pid, err := readPID(dir); err == nil && isAgent(pid, nd.ID) {
		return shoal.Errorf(shoal.ECONFLICT, "an agent still runs in node %s's work dir (pid %d)", nd.ID, pid)
	}
	killNodeProcesses(nd.ID, p.nodeDir(nd.ID))
	return os.RemoveAll(dir)
}
