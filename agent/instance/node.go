// Package instance serves a compute instance from the agent of its node:
// SSH, the notebook, custom applications (on the host or from images, in
// containers of their own), setup scripts, the managed identity endpoint
// and the instance's own container when it runs as one, and reports what
// the server needs for idle shutdown. The agent hands it the node (Node)
// instead of the package importing the agent.
package instance

import (
	"log/slog"

	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
)

// Node is the node an instance runs on, as its agent configured it.
type Node struct {
	// NodeID is the node; WorkDir its work dir, which marks its processes
	// and keeps the instance's host key, ports and setup log; RunDir holds
	// the folders of its work, the instance's home among them.
	NodeID, WorkDir, RunDir string
	// Address is where the instance's SSH server listens.
	Address string
	// GPUDevices lists the host's GPUs the node owns ("0,1"; empty: no
	// restriction), for the instance's container.
	GPUDevices string
	// Client talks to the server for the instance.
	Client *client.AgentClient
	// Log receives the instance's logs.
	Log *slog.Logger
	// Clock stamps logins and script starts and paces the activity
	// samples (kernels, terminals, CPU) and the CPU share they measure.
	Clock core.Clock
	// Accounts are the OS accounts the instance user's processes run as.
	Accounts *runas.Accounts
	// Ctr is the node's container engine.
	Ctr *ctrhost.Host
	// SDKEnv is what Azure's SDKs need to reach Shoal from the instance's
	// shells, notebooks and applications (the agent's, since the CA bundle
	// it names is written once per node).
	SDKEnv func() map[string]string
	// OwnNetwork says the node makes network namespaces (its agent runs
	// as root and can): an instance that runs as host processes gets one
	// of its own (see hostNet), out through Slirp (slirp4netns's path;
	// "" gives it no way out but to the server).
	OwnNetwork bool
	Slirp      string
}
