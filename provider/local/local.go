package local

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/shoal-ml/shoal/agent/runas"
	nodekind "github.com/shoal-ml/shoal/domain/node"
)

// DefaultStopGrace is how long Release waits between SIGTERM and SIGKILL
// when Config.StopGrace is zero.
const DefaultStopGrace = 15 * time.Second

// Files in a node's work dir written by the provider.
const (
	// PIDFile holds the agent's pid (also its process group id). A server
	// that restarts reads it to adopt the agents that outlived it.
	PIDFile = "agent.pid"
	// LogFile receives the agent's stdout and stderr, appended.
	LogFile = "agent.log"
)

// JoinTokenEnv is the environment variable that carries the join token to
// the agent. The token is never put on the command line: every user of the
// host can read a process's argv, only its owner can read its environment.
const JoinTokenEnv = "SHOAL_JOIN_TOKEN"

// killWait bounds how long Release waits for a process to vanish after
// SIGKILL (a process in uninterruptible sleep dies only when it wakes).
const killWait = 5 * time.Second

// pollInterval is how often Release checks whether an adopted agent (one
// that is not a child of this process) has exited.
const pollInterval = 50 * time.Millisecond

// Config configures a Provider.
type Config struct {
	// DataDir is the server's data dir; a node gets NodesDir/<node-id>/
	// as its work dir, which is also its provider ref.
	DataDir string
	// NodesDir holds the nodes' work dirs; default DataDir/nodes. A server
	// running as root keeps it outside the data dir, where the accounts
	// work runs as can reach their folders (see app).
	NodesDir string
	// Executable is the path of the shoal binary run as
	// `<Executable> agent ...`; default os.Executable().
	Executable string
	// Logger receives the provider's log; default discards.
	Logger *slog.Logger
	// StopGrace is the time between SIGTERM and SIGKILL on Release;
	// default DefaultStopGrace.
	StopGrace time.Duration
	// ExtraArgs are appended to the agent command line (tests).
	ExtraArgs []string
	// GPUs is how many real GPU devices this host has (DetectGPUs): GPU
	// nodes get devices of their own. 0 gives none (no GPUs, or emulated).
	GPUs int
	// NodeDirRetention is how long a released cluster node's work dir
	// is kept; 0 means DefaultNodeDirRetention (a nanosecond removes it
	// at release). Instances' dirs are their homes: kept until the
	// instance is deleted.
	NodeDirRetention time.Duration
}

// Provider is the embedded default provider: each node is a `shoal agent`
// process on this host, started in its own process group so that it (and
// the jobs it runs) survives the server's terminal signals and a server
// crash: nodes are machines, they outlive a control-plane restart. A new
// Provider over the same DataDir adopts the agents that are still running
// (see Alive and Release). It relies on Linux's /proc to recognise them.
//
// Release stops the agent but keeps the node's work dir, whose agent.log is
// useful after the fact; removing old node dirs is left to the operator.
type Provider struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	closed  bool
	nodes   map[string]*node // by ref (work dir)
	devices map[string][]int // GPU devices by node ID
}

var _ nodekind.Provider = (*Provider)(nil)

// New returns a local provider with cfg's defaults filled in.
func New(cfg Config) *Provider {
	if cfg.Executable == "" {
		if exe, err := os.Executable(); err == nil {
			cfg.Executable = exe
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.NodeDirRetention <= 0 {
		cfg.NodeDirRetention = DefaultNodeDirRetention
	}
	cfg.ExtraArgs = append([]string(nil), cfg.ExtraArgs...)
	// A node's work dir is its agent's --work-dir and the directory the
	// agent starts in, and it marks the node's processes (SHOAL_NODE_DIR):
	// it must be absolute.
	if cfg.DataDir != "" {
		if abs, err := filepath.Abs(cfg.DataDir); err == nil {
			cfg.DataDir = abs
		}
	}
	if cfg.NodesDir == "" && cfg.DataDir != "" {
		cfg.NodesDir = filepath.Join(cfg.DataDir, "nodes")
	}
	if abs, err := filepath.Abs(cfg.NodesDir); err == nil && cfg.NodesDir != "" {
		cfg.NodesDir = abs
	}
	p := &Provider{
		cfg:     cfg,
		log:     cfg.Logger.With("provider", "local"),
		nodes:   make(map[string]*node),
		devices: make(map[string][]int),
	}
	// What a stopped server released and left past its retention.
	p.sweepReleased(time.Now())
	return p
}

// Name returns "local".
func (p *Provider) Name() string { return "local" }

// Close cancels the starts still waiting for their provisioning delay.
// It does not stop running agents: they must survive a server restart, and
// the next Provider over the same DataDir adopts them. After Close,
// Provision fails; Release and Alive keep working.
func (p *Provider) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	nodes := make([]*node, 0, len(p.nodes))
	for _, n := range p.nodes {
		nodes = append(nodes, n)
	}
	p.mu.Unlock()
	for _, n := range nodes {
		n.mu.Lock()
		if n.state == statePending {
			n.cancel()
			p.log.Info("delayed node start cancelled", "node", n.id)
		}
		n.mu.Unlock()
	}
}

// nodeDir is the work dir, and ref, of node id.
func (p *Provider) nodeDir(id string) string {
	return filepath.Join(p.cfg.NodesDir, id)
}

// lookup returns the node this Provider started under ref, or nil.
func (p *Provider) lookup(ref string) *node {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nodes[ref]
}

// nodeState is where a node this Provider started stands.
type nodeState int

const (
	statePending nodeState = iota // waiting for its provisioning delay
	stateRunning                  // process started (done says when it exits)
	stateStopped                  // released, cancelled or failed to start
)

// node is a node this Provider instance provisioned. Adopted nodes (started
// by an earlier instance) have no node; they are found through PIDFile.
type node struct {
	id  string
	dir string

	mu     sync.Mutex
	state  nodeState
	token  string // join token, kept only until the process starts
	server string
	ca     []byte        // the server's CA, for an HTTPS server
	gpus   []int         // the host's GPU devices it owns
	timer  *time.Timer   // delayed start, while statePending
	pid    int           // once started
	done   chan struct{} // closed once the process is reaped
	exit   error         // cmd.Wait's result, once done
}

// cancel abandons a pending start. n.mu must be held.
func (n *node) cancel() {
	if n.timer != nil {
		n.timer.Stop()
	}
	n.state = stateStopped
	n.token = ""
}

// exited reports whether the started process has been reaped. n.mu must be
// held.
func (n *node) exited() bool {
	if n.done == nil {
		return true
	}
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// WorkIsolation says as whom the nodes' work runs: the agents run as this
// server's user, and run work as accounts of their own only when that
// user is root.
func (p *Provider) WorkIsolation() string {
	accounts, err := runas.New()
	if err != nil {
		return err.Error()
	}
	return accounts.Describe()
}
