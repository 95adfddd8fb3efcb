// Package agent is the node agent, `shoal agent`: the same program on every
// kind of node. It joins the server with a single-use join token, then
// syncs (heartbeat and work poll in one long-poll), runs the ranks of job
// attempts it is given as real processes, streams their logs, uploads their
// outputs and reports every state change naming the attempt. It keeps
// running jobs alive while the server is away and reports back when it
// returns.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoal-ml/shoal/agent/ctrhost"
	"github.com/shoal-ml/shoal/agent/datacache"
	"github.com/shoal-ml/shoal/agent/files"
	"github.com/shoal-ml/shoal/agent/gpu"
	"github.com/shoal-ml/shoal/agent/instance"
	"github.com/shoal-ml/shoal/agent/rank"
	"github.com/shoal-ml/shoal/agent/runas"
	"github.com/shoal-ml/shoal/client"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/node"
)

// Config configures an agent.
type Config struct {
	// ServerURL is the Shoal server.
	ServerURL string
	// NodeID is the node this agent is.
	NodeID string
	// JoinToken is the single-use token the provider handed over.
	JoinToken string
	// WorkDir holds the attempts' folders.
	WorkDir string
	// Address is where other nodes reach this one (default 127.0.0.1).
	Address string
	// Logger receives the agent's logs.
	Logger *slog.Logger
	// OrphanTimeout: an agent with nothing running that cannot reach the
	// server for this long exits (default DefaultOrphanTimeout), so a lost
	// control plane does not leave agents behind forever. Results not yet
	// reported stay in the work dir; the server has the next agent it
	// starts there report them.
	OrphanTimeout time.Duration
	// GPUDevices lists the host's GPU devices this node owns ("0,1"); its
	// jobs see only these (CUDA_VISIBLE_DEVICES). Empty: no restriction.
	GPUDevices string
	// PreemptOnSignal says that the agent being stopped (its context
	// cancelled: SIGTERM) means its machine is being taken back, as Slurm
	// does to a pilot job it preempts, cancels or stops at its time limit.
	// The agent then tells the server its node is leaving, and its ranks —
	// including those the same signal reached first — end as preempted,
	// so their jobs requeue without spending retries.
	PreemptOnSignal bool
	// ServerCA is the PEM of the CA the server's HTTPS certificate comes
	// from, when not a system root (a server with --tls).
	ServerCA []byte
	// Accounts are the OS accounts work runs as; nil: one per principal
	// when the agent runs as root, else the agent's own user.
	Accounts *runas.Accounts
	// Containers is ContainersAuto (find an engine for jobs that name an
	// image) or ContainersOff.
	Containers string
	// NodeImage, when set, says the agent itself runs in a container of
	// this image (a kubernetes node's pod): a rank whose environment
	// names this image runs as a process here, in the image, and one
	// naming another image or a build fails with the reason.
	NodeImage string
	// ContainerHost is the engine's address (unix:///run/podman/podman.sock);
	// empty: Docker's socket when it answers, else podman's system
	// service, else a podman service of the node's own, started on first
	// use, on the host's image store (ContainerStore).
	ContainerHost string
	// ContainerDir holds the node's podman service's socket,
	// configuration and log; default <WorkDir>/podman.
	ContainerDir string
	// ContainerStore is the image store of the node's podman service:
	// empty for podman's default (/var/lib/containers/storage as root),
	// which the host's nodes and its podman CLI share.
	ContainerStore string
	// InsecureRegistries are registries (host:port) the node's podman
	// service reaches over plain HTTP.
	InsecureRegistries []string
	// ImageCacheBytes caps the node's images (DefaultImageCacheBytes when
	// 0): the least recently used are removed after a run.
	ImageCacheBytes int64
	// DataCacheBytes caps the node's data cache, where inputs from
	// datastores and URLs are kept for every job of the node
	// (DefaultDataCacheBytes when 0); least recently used entries no
	// running rank holds are evicted.
	DataCacheBytes int64
	// Clock and Rand drive the retry pacing and the orphan timeout; nil
	// means the wall clock and a random source.
	Clock core.Clock
	Rand  func() float64
}

// DefaultOrphanTimeout is Config.OrphanTimeout's default.
const DefaultOrphanTimeout = 15 * time.Minute

// Agent is a running node agent.
type Agent struct {
	cfg    Config
	client *client.AgentClient
	log    *slog.Logger
	join   *node.JoinResponse

	mu    sync.Mutex
	ranks map[node.RankRef]*rank.Rank
	wg    sync.WaitGroup
	// started remembers the ranks this agent ran, so that none runs twice.
	started startedRanks

	// instance serves a compute instance, on an instance's node.
	instance *instance.Runtime

	// outbox holds finished ranks' results until the server takes them.
	outbox *files.Outbox
	// reportsTakeLog: the server last heard from writes a log's end
	// carried by a final report (node.AgentSyncResponse.ReportsTakeLog).
	reportsTakeLog atomic.Bool
	// outage keeps the log short while the server is away and knows when
	// it last answered.
	outage *outageLog
	rand   func() float64
	// terminating is closed once the agent is being stopped.
	terminating chan struct{}
	// gpus asks nvidia-smi for the GPUs' utilisation.
	gpus *gpuProbe
	// net is what the node can do for its work's network (netcap.go).
	net netCaps
	// data is the node's data cache (see agent/datacache).
	data *datacache.Cache
	bundleState
	// nodeSSH is a cluster node's SSH server, when its cluster has SSH
	// access.
	nodeSSH nodeSSHState
	// accounts are the OS accounts work runs as (one per principal when
	// the agent runs as root).
	accounts *runas.Accounts
	// ctr is the node's container engine.
	ctr *ctrhost.Host
	// prepulls is the pre-pull of the cluster's images the join asked.
	prepulls prepullState
	// runDir holds the folders of the node's work (see prepareWorkDir):
	// the work dir, or a folder under files.RunRoot.
	runDir string
}

// now reads the agent's clock.
func (a *Agent) now() time.Time { return a.cfg.Clock.Now() }

// after waits d. Timers use the wall clock even under a fake Clock: only
// decisions read the Clock.
func (a *Agent) after(d time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(d, func() { close(ch) })
	return ch
}

// Run joins the server and serves until ctx is cancelled or the server
// tells the node to exit.
func Run(ctx context.Context, cfg Config) error {
	if cfg.NodeID == "" || cfg.ServerURL == "" || cfg.JoinToken == "" || cfg.WorkDir == "" {
		return errors.New("agent: --server, --node-id, --work-dir and SHOAL_JOIN_TOKEN are required")
	}
	a, err := newAgent(cfg)
	if err != nil {
		return err
	}
	port, err := freePort(a.cfg.Address, a.rand)
	if err != nil {
		return err
	}
	stopWatching := context.AfterFunc(ctx, func() { close(a.terminating) })
	defer stopWatching()
	a.ctr = ctrhost.Open(ctx, a.cfg.containerHost(), a.log)
	defer a.ctr.Close()
	if info := a.ctr.Info(); info.Error != "" {
		a.log.Info("no container engine: jobs that name an image cannot run here", "why", info.Error)
	} else {
		a.log.Info("container engine", "engine", info.Engine, "version", info.Version)
	}
	if err := a.joinServer(ctx, port); err != nil {
		return err
	}
	a.log.Info("joined", "port", port)
	if order := a.join.Prepull; order != nil && len(order.Images) > 0 {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.prepull(ctx, order)
		}()
	}
	deliverCtx, stopDelivering := context.WithCancel(ctx)
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		a.deliverLoop(deliverCtx)
	}()
	err = a.syncLoop(ctx)
	if ctx.Err() != nil && a.cfg.PreemptOnSignal {
		a.leave(context.WithoutCancel(ctx), "the agent was sent SIGTERM (the node's machine is being taken back)")
	}
	if rt := a.instanceRT(); rt != nil {
		rt.Close()
	}
	a.closeNodeSSH()
	a.stopAll("preempted")
	a.wg.Wait()
	stopDelivering()
	<-delivered
	return err
}

// newAgent fills in cfg's defaults and opens the node's work dir, with the
// results an earlier agent left there.
func newAgent(cfg Config) (*Agent, error) {
	if cfg.Address == "" {
		cfg.Address = "127.0.0.1"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OrphanTimeout == 0 {
		cfg.OrphanTimeout = DefaultOrphanTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	// The work dir marks the node's processes (SHOAL_NODE_DIR), which the
	// local provider finds by it: an absolute path, as the provider has it.
	dir, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return nil, err
	}
	cfg.WorkDir = dir
	if err := os.MkdirAll(cfg.WorkDir, 0o700); err != nil {
		return nil, err
	}
	accounts := cfg.Accounts
	if accounts == nil {
		if accounts, err = runas.New(); err != nil {
			return nil, err
		}
	}
	runDir, err := files.PrepareWorkDir(cfg.WorkDir, cfg.NodeID, accounts.Isolated())
	if err != nil {
		return nil, err
	}
	a := &Agent{accounts: accounts, runDir: runDir, cfg: cfg, client: client.NewAgentClient(cfg.ServerURL, cfg.JoinToken), log: cfg.Logger.With("node", cfg.NodeID), ranks: map[node.RankRef]*rank.Rank{}, rand: cfg.Rand, terminating: make(chan struct{}), gpus: &gpuProbe{query: gpu.Query}}
	a.client.OnMove = func(from, to string, err error) {
		a.log.Warn("the server did not answer; moving to another", "from", from, "to", to, "err", err)
	}
	if err := a.client.TrustCA(cfg.ServerCA); err != nil {
		return nil, fmt.Errorf("agent: the server's CA: %w", err)
	}
	a.outage = newOutageLog(a.log, a.now, SummaryInterval, a.status)
	a.net = a.probeNetwork()
	capBytes := cfg.DataCacheBytes
	if capBytes <= 0 {
		capBytes = DefaultDataCacheBytes
	}
	if a.data, err = datacache.Open(filepath.Join(cfg.WorkDir, "data-cache"), capBytes); err != nil {
		return nil, fmt.Errorf("agent: the data cache: %w", err)
	}
	var errs []error
	a.outbox, errs = files.OpenOutbox(cfg.WorkDir)
	for _, err := range errs {
		a.log.Error("a result left by an earlier agent cannot be read", "err", err)
	}
	if n := a.outbox.Len(); n > 0 {
		a.log.Info("results left by an earlier agent wait to be reported", "results", n)
	}
	return a, nil
}

// instanceRT returns the instance runtime, nil on other nodes.
func (a *Agent) instanceRT() *instance.Runtime {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.instance
}

// status describes what the node holds, for the outage summaries.
func (a *Agent) status() []any {
	return []any{"results_waiting", a.outbox.Len(), "ranks_running", len(a.running())}
}

// joinServer joins, retrying while the server is unreachable.
// An agent that cannot join within the orphan timeout exits: its server is
// gone.
func (a *Agent) joinServer(ctx context.Context, port int) error {
	b := newBackoff(MinRetryInterval/2, MaxRetryInterval, a.rand)
	start := a.now()
	moved := 0
	for {
		before := a.client.Servers()[0]
		resp, err := a.client.Join(ctx, node.JoinRequest{NodeID: a.cfg.NodeID, Address: a.cfg.Address, Port: port, Runtime: a.ctr.Report()})
		if err == nil {
			a.join = resp
			a.client.SetServers(resp.Servers)
			a.reportsTakeLog.Store(resp.ReportsTakeLog)
			a.outage.succeeded()
			return nil
		}
		if code := core.ErrorCode(err); code == core.EUNAUTHORIZED || code == core.EINVALID || code == core.EFORBIDDEN {
			return fmt.Errorf("join refused: %w", err)
		}
		a.outage.failed("join", err)
		if a.now().Sub(start) > a.cfg.OrphanTimeout {
			return fmt.Errorf("no server answered for %s; giving up: %w", a.cfg.OrphanTimeout, err)
		}
		if moved < len(a.client.Servers())-1 && a.client.Servers()[0] != before {
			moved++
			continue // another server, at once (each once, then backing off)
		}
		moved = 0
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-a.after(b.next()):
		}
	}
}

// syncLoop heartbeats and receives work until told to exit. While the
// server does not answer it retries with backoff; once nothing runs and
// the server has been silent for the orphan timeout, it returns.
func (a *Agent) syncLoop(ctx context.Context) error {
	interval := a.join.HeartbeatInterval
	if interval <= 0 {
		interval = 3 * time.Second
	}
	b := newBackoff(MinRetryInterval, syncRetryCap(a.join.LeaseTTL), a.rand)
	first := true
	moved := 0
	for ctx.Err() == nil {
		req := &node.AgentSyncRequest{Running: a.running(), Pending: a.outbox.Refs(), First: first, SSHPort: a.sshPort(),
			Prepulled: a.prepulls.take()}
		if changed := a.ctr.TakeInfoChanged(); first || changed || req.Prepulled != nil {
			// The server keeps what the host has: its GPUs and its image
			// cache, which pre-pulls filled.
			req.Runtime = a.ctr.Report()
		}
		wait := interval
		if rt := a.instanceRT(); rt != nil {
			req.Instance = rt.Report(ctx)
			if req.Instance.Phase == node.InstancePhaseSettingUp {
				// The user waits for the instance: say soon when it is up.
				wait = 250 * time.Millisecond
			}
		}
		before := a.client.Servers()[0]
		sctx, cancel := context.WithTimeout(ctx, syncBound(wait, interval))
		resp, err := a.client.Sync(sctx, req, wait)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if req.Runtime != nil {
				// The next sync carries it again.
				a.ctr.ReportAgain()
			}
			if core.ErrorCode(err) == core.EUNAUTHORIZED {
				a.log.Warn("the server no longer knows this node; exiting", "err", err)
				return nil
			}
			a.outage.failed("sync", err)
			// The next try on a new connection: several servers may
			// answer at this URL, and this one failed.
			a.client.Reconnect()
			if away := a.now().Sub(a.outage.lastContact()); len(a.running()) == 0 && away > a.cfg.OrphanTimeout {
				a.log.Warn("server unreachable and nothing running; exiting", "for", away.Round(time.Second),
					"results_waiting", a.outbox.Len(), "results_dir", a.outbox.Dir())
				return nil
			}
			if moved < len(a.client.Servers())-1 && a.client.Servers()[0] != before {
				// Its server did not answer and it knows another: at
				// once, before the node's lease runs out (each other
				// server once; then backing off).
				moved++
				continue
			}
			moved = 0
			select {
			case <-ctx.Done():
			case <-a.after(b.next()):
			}
			continue
		}
		b.reset()
		moved = 0
		a.client.SetServers(resp.Servers)
		a.reportsTakeLog.Store(resp.ReportsTakeLog)
		if resp.HeartbeatInterval > 0 {
			// The lease follows the fleet's size (decide/nodelease):
			// the server says the pace on every sync.
			interval = resp.HeartbeatInterval
		}
		first = false
		if req.Prepulled != nil {
			a.prepulls.sent(req.Prepulled)
		}
		a.outage.succeeded()
		if rt := a.instanceRT(); rt != nil && req.Instance != nil {
			rt.Reported()
		}
		for _, s := range resp.Stop {
			a.stopRank(s.RankRef, s.Reason)
		}
		for _, t := range resp.Start {
			a.startRank(ctx, t)
		}
		a.instanceTask(ctx, resp.Instance)
		if resp.SSH != nil {
			a.serveNodeSSH(resp.SSH)
		} else if cfg := a.retrySSH(); cfg != nil {
			a.serveNodeSSH(cfg)
		}
		if resp.Exit {
			a.log.Info("released by the server; exiting")
			return nil
		}
	}
	return nil
}

// syncBound is how long a sync may take: the long poll's wait, and half
// the node's lease (interval is a third of it), at least 2 s, for the
// server to answer. A server that accepts the call and does not answer
// (one cut off from its database, whose writes wait out their own 30 s
// bound) would otherwise hold the agent's heartbeat past its lease, the
// HTTP client's own limit being a minute: the node would be declared lost
// and its jobs run again. Past the bound the agent calls again on a new
// connection, which a load balancer gives to a ready server, or moves to
// the next server it knows.
func syncBound(wait, interval time.Duration) time.Duration {
	return wait + max(2*time.Second, interval*3/2)
}

func (a *Agent) running() []node.RankRef {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]node.RankRef, 0, len(a.ranks))
	for r := range a.ranks {
		out = append(out, r)
	}
	return out
}

func (a *Agent) stopRank(ref node.RankRef, reason string) {
	a.mu.Lock()
	r := a.ranks[ref]
	a.mu.Unlock()
	if r != nil {
		a.log.Info("stopping rank", "attempt", ref.AttemptID, "rank", ref.Rank, "reason", reason)
		r.Stop(reason)
	}
}

func (a *Agent) stopAll(reason string) {
	for _, ref := range a.running() {
		a.stopRank(ref, reason)
	}
}

func (a *Agent) startRank(ctx context.Context, t *node.AgentTask) {
	if a.outbox.Has(t.RankRef) {
		return // it ran already; its result waits to be reported
	}
	a.mu.Lock()
	if _, ok := a.ranks[t.RankRef]; ok {
		a.mu.Unlock()
		return
	}
	if !a.started.claim(t.RankRef) {
		a.mu.Unlock()
		a.log.Warn("not starting a rank this node already ran (a stale answer)", "attempt", t.RankRef.AttemptID, "rank", t.RankRef.Rank)
		return
	}
	r := rank.New(a.rankNode(), t)
	a.ranks[t.RankRef] = r
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		r.Run(context.WithoutCancel(ctx))
		a.mu.Lock()
		delete(a.ranks, t.RankRef) // finish did, unless the rank panicked its way out
		a.mu.Unlock()
	}()
}

// Ports of a node's distributed jobs: MASTER_PORT when the node is rank
// 0, and a tensorflow job's task local of the node listens on the port +
// local. The node's port starts a block of portBlock ports that were all
// free when it was picked, aligned to the block and outside Linux's
// default range of ephemeral ports (32768-60999), so that another
// node's block on the host never overlaps it partly and an outgoing
// connection is not handed one of them. Picked by kernel before this,
// two agents started together got ports one apart, and a tensorflow
// task of one listened on the other's port (Errno 98).
const (
	portBlock            = 16
	portLow, portHigh    = 20000, 32768
	portTries            = 64
	portBlocksInTheRange = (portHigh - portLow) / portBlock
)

// freePort picks this node's port: the start of a free block (see
// portBlock), chosen with rnd; the kernel's pick when no block is free.
func freePort(addr string, rnd func() float64) (int, error) {
	for try := 0; try < portTries; try++ {
		p := portLow + int(rnd()*portBlocksInTheRange)*portBlock
		if blockFree(addr, p, portBlock) {
			return p, nil
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// blockFree reports whether ports p to p+n-1 of addr can all be bound.
func blockFree(addr string, p, n int) bool {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(p+i)))
		if err != nil {
			return false
		}
		held = append(held, l)
	}
	return true
}

// containerHost is what the node's container engine needs of cfg.
func (cfg Config) containerHost() ctrhost.Config {
	return ctrhost.Config{NodeID: cfg.NodeID, WorkDir: cfg.WorkDir, Containers: cfg.Containers, ContainerHost: cfg.ContainerHost,
		ContainerDir: cfg.ContainerDir, PodmanStore: cfg.ContainerStore, InsecureRegistries: cfg.InsecureRegistries, ImageCacheBytes: cfg.ImageCacheBytes, Clock: cfg.Clock}
}

// DefaultDataCacheBytes caps a node's data cache when
// Config.DataCacheBytes is 0: the image cache's default size.
const DefaultDataCacheBytes = 20 << 30
