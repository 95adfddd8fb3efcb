package agent

import (
	"context"

	"github.com/shoal-ml/shoal/agent/instance"
	"github.com/shoal-ml/shoal/domain/node"
)

// instanceTask is called with every sync answer of an instance node: the
// first starts the runtime, later ones update what may change (the SSH
// key).
func (a *Agent) instanceTask(ctx context.Context, t *node.InstanceTask) {
	if t == nil {
		return
	}
	a.mu.Lock()
	rt := a.instance
	if rt == nil {
		rt = instance.New(a.instanceNode())
		a.instance = rt
	}
	a.mu.Unlock()
	if rt.Update(t) {
		rt.Start(ctx)
	}
}

// instanceNode is the node as its instance sees it.
func (a *Agent) instanceNode() instance.Node {
	return instance.Node{NodeID: a.cfg.NodeID, WorkDir: a.cfg.WorkDir, RunDir: a.runDir, Address: a.cfg.Address,
		GPUDevices: a.cfg.GPUDevices, Client: a.client, Log: a.log, Clock: a.cfg.Clock, Accounts: a.accounts, Ctr: a.ctr,
		SDKEnv: a.sdkEnv, OwnNetwork: a.net.own, Slirp: a.net.slirp}
}
