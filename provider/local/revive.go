package local

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/shoal-ml/shoal/domain/core"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

var _ nodekind.Reviver = (*Provider)(nil)

// Revive starts a new agent in the work dir of a node whose agent exited
// (see shoal.Reviver): processes left by the old agent's jobs are killed
// first, then the agent starts as Provision starts one, on the same dir,
// where it finds the results the old agent kept. Returns ENOTFOUND when
// the work dir is gone and ECONFLICT when an agent still runs there.
func (p *Provider) Revive(ctx context.Context, req nodekind.ProvisionRequest) error {
	if req.Node == nil {
		return core.Errorf(core.EINVALID, "revive: no node given")
	}
	if err := checkNodeID(req.Node.ID); err != nil {
		return err
	}
	if _, err := os.Stat(p.nodeDir(req.Node.ID)); errors.Is(err, fs.ErrNotExist) {
		return core.Errorf(core.ENOTFOUND, "node %s has no work dir left to revive", req.Node.ID)
	}
	if n := killNodeProcesses(req.Node.ID, p.nodeDir(req.Node.ID)); n > 0 {
		p.log.Info("killed processes left by the node's previous agent", "node", req.Node.ID, "processes", n)
	}
	req.Delay = 0 // the machine exists already
	_, err := p.Provision(ctx, req)
	return err
}
