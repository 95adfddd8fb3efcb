// Package rank runs the ranks of job attempts that the server gives a
// node: each as processes on the host or as containers of its image,
// with its folders, inputs, managed identity and log, reporting its state
// changes. What a rank needs of the agent that runs it (its results'
// outbox, the GPU sampler, the node's CA bundle) comes through Agent, so
// that this package does not import the agent.
package rank

import (
	"context"
	"log/slog"

	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// Node is the node a rank runs on, as its agent configured it.
type Node struct {
	// Address is where users and other nodes reach this node (a job's
	// ssh service listens there).
	Address string
	// NodeID is the node; WorkDir its work dir, which marks its processes
	// (SHOAL_NODE_DIR); RunDir holds the folders of its work (see
	// files.PrepareWorkDir).
	NodeID, WorkDir, RunDir string
	// ServerURL is the Shoal server, for the job's MLflow variables and
	// its containers' way back to the server.
	ServerURL string
	// GPUDevices lists the host's GPUs the node owns ("0,1"; empty: no
	// restriction).
	GPUDevices string
	// NodeImage is the image the agent itself runs in, when it does (a
	// kubernetes node's pod).
	NodeImage string
	// Client talks to the server for the rank.
	Client *client.AgentClient
	// Log receives the rank's logs.
	Log *slog.Logger
	// Clock stamps the rank's start and end.
	Clock core.Clock
	// Accounts are the OS accounts the rank's processes run as.
	Accounts *runas.Accounts
	// Ctr is the node's container engine.
	Ctr *ctrhost.Host
	// Agent is the agent running the rank.
	Agent Agent
	// Networks, when set, are the network namespaces the node's
	// single-node ranks that run as host processes run in, one per
	// account (the agent can make them: it runs as root). See netns.go.
	Networks *Networks
	// Data is the node's data cache, where inputs from datastores and
	// URLs are fetched once for every job on the host; nil: such inputs
	// fail their job.
	Data *datacache.Cache
	// OwnEndpoints, when set, lists the host:ports the agent itself
	// serves on the host's network (the node's SSH server), which no
	// job's data may be fetched from or sent to.
	OwnEndpoints func() []string
}

// Agent is what a rank needs of the agent that runs it: a small interface,
// so that the agent imports this package and not the other way round.
type Agent interface {
	// Finish records the rank's result and delivers it (the agent's
	// outbox), and forgets the rank as running. It reports whether the
	// server answered the delivery at once (else the result waits in
	// the outbox and is delivered later).
	Finish(ctx context.Context, p *files.Result) (delivered bool)
	// StartRank starts a task that a report's answer brought.
	StartRank(ctx context.Context, t *node.AgentTask)
	// SampleGPUs samples the node's GPUs for ref until ctx ends.
	SampleGPUs(ctx context.Context, ref node.RankRef)
	// TakenBack reports whether processes that ended with reason and
	// code were ended by the node's machine being taken back.
	TakenBack(reason string, code int) bool
	// SDKEnv is what Azure's SDKs need to reach Shoal from a job.
	SDKEnv() map[string]string
	// CABundle is the path of the CA bundle with the server's CA, "" when
	// none is needed.
	CABundle() string
}
